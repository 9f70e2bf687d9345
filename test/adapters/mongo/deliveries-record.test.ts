import { type Collection, MongoNetworkTimeoutError } from "mongodb";
import { describe, expect, it } from "vitest";
import {
  COMMAND_BUDGET_MS,
  RESULTS_PER_COMMAND,
  resultWriter,
} from "../../../src/adapters/mongo/deliveries-record.ts";
import type { DeliveryDoc } from "../../../src/adapters/mongo/documents/deliveries.ts";
import type { AttemptResult } from "../../../src/app/ports/deliveries.ts";

// Issue 31: on FerretDB v1 every guarded update reads the whole collection, so a command of 200 results
// on a collection of thousands ran past the 30 s socket timeout, forever. The writer sizes each command
// by the time per result the last ones took. A collection double whose time per statement is set by
// the test, on a clock of the test's own.

const result = (i: number): AttemptResult => ({
  id: `d${i}`,
  status: "succeeded",
  responseStatus: 200,
  responseBody: "ok",
  error: null,
  durationMs: 1,
  attemptedAt: new Date(0),
  nextAttemptAt: null,
  next: null,
});

function slowCollection(msPerStatement: () => number, limitMs = Number.POSITIVE_INFINITY) {
  let clock = 0;
  const commands: number[] = [];
  const written: string[] = [];
  const col = {
    async bulkWrite(ops: { updateMany: { filter: { _id: string } } }[]) {
      commands.push(ops.length);
      const took = ops.length * msPerStatement();
      if (took > limitMs) {
        clock += limitMs;
        throw new MongoNetworkTimeoutError("connection 6 to 127.0.0.1:27017 timed out");
      }
      clock += took;
      written.push(...ops.map((o) => o.updateMany.filter._id));
      // Every record was pending: each result's update matched.
      return { matchedCount: ops.length };
    },
  } as unknown as Collection<DeliveryDoc>;
  const write = resultWriter(
    col,
    async () => {},
    () => clock,
  );
  return { write, commands, written };
}

describe("writing results in commands sized to the server's pace (MongoDB store)", () => {
  it("on a fast server every command carries up to the bound, never more", async () => {
    const c = slowCollection(() => 0.05);
    await c.write(Array.from({ length: 1_000 }, (_, i) => result(i)));
    expect(c.written).toHaveLength(1_000);
    expect(Math.max(...c.commands)).toBe(RESULTS_PER_COMMAND);
  });

  it("on a server that takes 300 ms a statement, commands shrink to what fits the budget", async () => {
    const c = slowCollection(() => 300);
    await c.write(Array.from({ length: 200 }, (_, i) => result(i)));
    expect(c.written).toHaveLength(200);
    const fits = Math.floor(COMMAND_BUDGET_MS / 300);
    // The first command is a guess; from the third on each takes about the budget.
    expect(c.commands.slice(2).every((n) => n <= 2 * fits)).toBe(true);
    expect(c.commands.at(-2)).toBeLessThanOrEqual(fits + 1);
  });

  it("a command that timed out makes the next one small enough, and the timeout is rethrown", async () => {
    let ms = 0.05;
    const c = slowCollection(() => ms, 30_000);
    await c.write(Array.from({ length: 400 }, (_, i) => result(i)));
    ms = 400; // the collection grew: 200 statements would take 80 s
    await expect(c.write(Array.from({ length: 200 }, (_, i) => result(1_000 + i)))).rejects.toBeInstanceOf(
      MongoNetworkTimeoutError,
    );
    await c.write(Array.from({ length: 200 }, (_, i) => result(1_000 + i)));
    expect(new Set(c.written).size).toBe(600);
    expect(Math.max(...c.commands.slice(-3)) * 400).toBeLessThan(30_000);
  });
});
