import { describe, expect, it } from "vitest";
import { EVENT_SOON_MS, postponer } from "../../../src/app/engine/postpone.ts";
import { EVENT_RECHECK_MS } from "../../../src/app/engine/prepare.ts";
import { silentLogger } from "../../../src/app/logger.ts";
import { manualClock } from "../../support/engine-harness.ts";
import { until } from "../../support/until.ts";

/** A postponer whose store writes the test finishes; it records what was let go and when a recheck was asked. */
function postponing(postpone?: (ids: readonly string[], until: Date) => Promise<void>) {
  const clock = manualClock();
  const writes: [readonly string[], Date][] = [];
  const log: string[] = [];
  let finish!: () => void;
  const p = postponer({
    deliveries: {
      postpone:
        postpone ??
        ((ids, until) => {
          writes.push([ids, until]);
          return new Promise<void>((r) => (finish = r));
        }),
    },
    clock,
    logger: silentLogger,
    done: (ids) => void log.push(`done ${ids.join(",")} pending=${p.pending}`),
    recheck: () => void log.push(`recheck pending=${p.pending}`),
  });
  return { p, clock, writes, log, finish: () => finish() };
}

describe("deliveries whose event is not stored yet", () => {
  it("are held in memory and read again, three times with no write, then moved on in the store", async () => {
    const { p, clock, writes, log, finish } = postponing();
    const started = performance.now();
    for (let time = 0; time < EVENT_SOON_MS.length; time++) {
      await p.postpone([{ id: "d1" }]);
      expect(p.pending).toBe(1);
      // Asked to read again while still counted (the engine is not idle in between), then let go.
      await until(() => log.length === 2 * (time + 1));
      expect(log.slice(-2)).toEqual(["recheck pending=1", "done d1 pending=0"]);
      expect(writes).toEqual([]);
    }
    const sum = EVENT_SOON_MS.reduce((a, b) => a + b, 0);
    expect(performance.now() - started).toBeGreaterThanOrEqual(sum - 5);
    // Found so a fourth time: its publish most likely died; one write moves it on.
    const writing = p.postpone([{ id: "d1" }, { id: "d2" }]);
    expect(writes).toEqual([[["d1"], new Date(clock.now().getTime() + EVENT_RECHECK_MS)]]);
    finish();
    await writing;
    expect(log).toContain("done d1 pending=1");
    await until(() => log.includes("done d2 pending=0"));
  });

  it("a failed write still lets them go (they stay pending, read again later)", async () => {
    const { p, log } = postponing(() => Promise.reject(new Error("down")));
    for (let time = 0; time <= EVENT_SOON_MS.length; time++) {
      await p.postpone([{ id: "d1" }]);
      await until(() => p.pending === 0);
    }
    expect(log.at(-1)).toBe("done d1 pending=0");
  });

  it("what waits in memory is answered, still held, once its publish here has stored the event; the rest waits on", async () => {
    const { p, log } = postponing();
    await p.postpone([{ id: "d1" }, { id: "d2" }]);
    expect(p.eventStored(["d1", "other"])).toEqual(["d1"]);
    // Not let go by the postponer (the hand-over holds it now), and d2's wait goes on.
    expect(p.pending).toBe(1);
    expect(p.eventStored(["d2"])).toEqual(["d2"]);
    expect(p.pending).toBe(0);
    await new Promise((r) => setTimeout(r, EVENT_SOON_MS[0] + 50));
    expect(log).toEqual([]);
    expect(p.eventStored(["d1"])).toEqual([]);
  });

  it("a stop lets go at once of what is held, with no recheck", async () => {
    const { p, log } = postponing();
    await p.postpone([{ id: "d1" }]);
    p.stop();
    expect(p.pending).toBe(0);
    expect(log).toEqual(["done d1 pending=0"]);
    await new Promise((r) => setTimeout(r, EVENT_SOON_MS[0] + 50));
    expect(log).toEqual(["done d1 pending=0"]);
  });
});
