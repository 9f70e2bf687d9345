import { describe, expect, it } from "vitest";
import { scheduledRead } from "../../../src/app/engine/scheduled-read.ts";

// When the schedule's once-a-second tick reads the database (ADR 30, "The scheduled read waits").

const T = 1_000_000;
const CAP = 5_000;

/** A read that started at `at` of `shards` and answered `next` (ms, null: none by the cap, undefined: no answer). */
function afterRead(next: number | null | undefined, shards: number[] | null = null, at = T, live = true) {
  const s = scheduledRead({ capMs: CAP });
  s.landed(s.reading(at, shards, live), next === null || next === undefined ? next : new Date(next));
  return s;
}

describe("the scheduled read", () => {
  it("reads every tick until a read has said when the next comes due", () => {
    const s = scheduledRead({ capMs: CAP });
    expect(s.mustRead(T, null, true)).toBe(true);
    s.landed(s.reading(T, null, true), undefined);
    expect(s.mustRead(T + 1, null, true)).toBe(true);
  });

  it("waits until the next comes due, and never longer than the cap", () => {
    const soon = afterRead(T + 3_000);
    expect(soon.mustRead(T + 2_999, null, true)).toBe(false);
    expect(soon.mustRead(T + 3_000, null, true)).toBe(true);
    const none = afterRead(null);
    expect(none.mustRead(T + CAP - 1, null, true)).toBe(false);
    expect(none.mustRead(T + CAP, null, true)).toBe(true);
    // An answer beyond the cap (a store looking further than asked) does not stretch it.
    expect(afterRead(T + 60_000).mustRead(T + CAP, null, true)).toBe(true);
  });

  it("reads by the time noted for work written after the read started, even if that read lands later", () => {
    const s = scheduledRead({ capMs: CAP });
    const start = s.reading(T, null, true);
    // A follow-up written while the read was on its way: its answer may not include it.
    s.noted(T + 2_000);
    s.landed(start, null);
    expect(s.mustRead(T + 1_999, null, true)).toBe(false);
    expect(s.mustRead(T + 2_000, null, true)).toBe(true);
    // Noted after the landing too; what was noted before the next read started is in its answer.
    const later = afterRead(null);
    later.noted(T + 1_000);
    expect(later.mustRead(T + 1_000, null, true)).toBe(true);
    const next = later.reading(T + 1_000, null, true);
    later.landed(next, null);
    expect(later.mustRead(T + 2_000, null, true)).toBe(false);
  });

  it("reads a shard claimable now that the last read did not cover", () => {
    const s = afterRead(null, [1, 2, 3]);
    expect(s.mustRead(T + 1_000, [1, 3], true)).toBe(false);
    expect(s.mustRead(T + 1_000, [1, 2, 3, 4], true)).toBe(true);
    // Every shard (null) is more than some.
    expect(s.mustRead(T + 1_000, null, true)).toBe(true);
    expect(afterRead(null, null).mustRead(T + 1_000, null, true)).toBe(false);
  });

  it("reads every tick while announcements are not known to get through, and once after they are again", () => {
    const s = afterRead(null);
    expect(s.mustRead(T + 1_000, null, false)).toBe(true);
    // The last read began while the channel was down: what was announced meanwhile may be lost.
    expect(afterRead(null, null, T, false).mustRead(T + 1_000, null, true)).toBe(true);
  });

  it("counts a clock set back past the cap as the cap passed", () => {
    const s = afterRead(T + 3_000);
    expect(s.mustRead(T - 1_000, null, true)).toBe(false);
    expect(s.mustRead(T - CAP, null, true)).toBe(true);
  });
});
