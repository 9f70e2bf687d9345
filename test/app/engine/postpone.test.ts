import { describe, expect, it } from "vitest";
import { postponer } from "../../../src/app/engine/postpone.ts";
import { EVENT_RECHECK_MS } from "../../../src/app/engine/prepare.ts";
import { silentLogger } from "../../../src/app/logger.ts";
import { manualClock } from "../../support/engine-harness.ts";

describe("postponing deliveries whose event is not stored yet", () => {
  it("moves them on by the recheck time, counts the write while on its way, then lets them go", async () => {
    const clock = manualClock();
    const writes: [readonly string[], Date][] = [];
    let finish!: () => void;
    const done: string[][] = [];
    const p = postponer({
      deliveries: {
        postpone: (ids, until) => {
          writes.push([ids, until]);
          return new Promise<void>((r) => (finish = r));
        },
      },
      clock,
      logger: silentLogger,
      done: (ids) => void done.push([...ids]),
    });
    const writing = p.postpone(["d1", "d2"]);
    expect(p.pending).toBe(1);
    expect(writes).toEqual([[["d1", "d2"], new Date(clock.now().getTime() + EVENT_RECHECK_MS)]]);
    expect(done).toEqual([]);
    finish();
    await writing;
    expect(p.pending).toBe(0);
    expect(done).toEqual([["d1", "d2"]]);
  });

  it("a failed write still lets them go (they stay pending, read again later)", async () => {
    const done: string[][] = [];
    const p = postponer({
      deliveries: { postpone: () => Promise.reject(new Error("down")) },
      clock: manualClock(),
      logger: silentLogger,
      done: (ids) => void done.push([...ids]),
    });
    await p.postpone(["d1"]);
    expect(p.pending).toBe(0);
    expect(done).toEqual([["d1"]]);
  });
});
