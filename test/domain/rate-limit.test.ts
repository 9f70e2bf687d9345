import { describe, expect, it } from "vitest";
import {
  nextStartAt,
  type Pace,
  paceIdle,
  paceStarted,
  parseRateLimitText,
  type RateLimit,
  rateLimitIssues,
  rateLimitText,
  repace,
  startPace,
  turnsWithin,
} from "../../src/domain/rate-limit.ts";

const perSecond = (count: number): RateLimit => ({ count, per: "second" });

/** Starts as many attempts as the pace allows, each `lateness(i)` ms after its turn, until `until`. */
function run(p: Pace, from: number, until: number, lateness: (i: number) => number): number[] {
  const starts: number[] = [];
  let t = from;
  for (let i = 0; ; i++) {
    t = Math.max(t, nextStartAt(p)) + lateness(i);
    if (t >= until) return starts;
    paceStarted(p, t);
    starts.push(t);
  }
}

function mostInWindow(values: readonly number[], windowMs: number): number {
  let most = 0;
  let start = 0;
  for (let end = 0; end < values.length; end++) {
    while (values[end]! - values[start]! >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

/** A small seeded PRNG (mulberry32). */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe("rate limit text", () => {
  it("reads and writes N/s and N/m", () => {
    expect(parseRateLimitText("5/s")).toEqual({ count: 5, per: "second" });
    expect(parseRateLimitText(" 300 / min ")).toEqual({ count: 300, per: "minute" });
    expect(parseRateLimitText("2/second")).toEqual({ count: 2, per: "second" });
    for (const bad of ["5", "5/h", "/s", "five/s", "5/s/m", "-1/s", "1.5/s", ""])
      expect(parseRateLimitText(bad)).toBeNull();
    expect(rateLimitText({ count: 300, per: "minute" })).toBe("300/m");
    expect(rateLimitText(perSecond(5))).toBe("5/s");
  });

  it("accepts 1-1000 per second and 1-60000 per minute", () => {
    expect(rateLimitIssues(perSecond(1))).toEqual([]);
    expect(rateLimitIssues(perSecond(1000))).toEqual([]);
    expect(rateLimitIssues({ count: 60_000, per: "minute" })).toEqual([]);
    expect(rateLimitIssues(perSecond(0))).toEqual(["must be an integer from 1 to 1000 per second"]);
    expect(rateLimitIssues(perSecond(1001))).toHaveLength(1);
    expect(rateLimitIssues(perSecond(1.5))).toHaveLength(1);
    expect(rateLimitIssues({ count: 60_001, per: "minute" })).toHaveLength(1);
  });
});

describe("pace", () => {
  it("starts empty: the first attempt waits one period after the shard was taken", () => {
    const p = startPace(perSecond(5), 10_000);
    expect(nextStartAt(p)).toBe(11_000);
    expect(turnsWithin(p, 10_000, 999)).toBe(0);
    expect(turnsWithin(p, 10_000, 1_000)).toBe(1);
  });

  it("on time, turns come one interval apart", () => {
    const p = startPace(perSecond(5), 0);
    const starts = run(p, 0, 3_000, () => 0);
    expect(starts).toEqual([1_000, 1_200, 1_400, 1_600, 1_800, 2_000, 2_200, 2_400, 2_600, 2_800]);
  });

  it("never lets a window of one period hold more than the count, however late the starts come", () => {
    for (let seed = 1; seed <= 50; seed++) {
      const next = random(seed);
      const count = 1 + Math.floor(next() * 20);
      const p = startPace(perSecond(count), 0);
      // Late by up to two intervals, now and then by a whole second.
      const starts = run(p, 0, 60_000, () => (next() < 0.02 ? 1_000 : next() * (2_000 / count)));
      expect(mostInWindow(starts, 1_000), `seed ${seed}, ${count}/s`).toBeLessThanOrEqual(count);
    }
  });

  it("catches up timer lateness: late starts still make the limit's total over a minute", () => {
    const p = startPace(perSecond(5), 0);
    const next = random(7);
    // Each start up to 60 ms late (a loaded machine): spacing each start one interval after the previous
    // one would make about 260 of 300; the pace makes at least 95%.
    const starts = run(p, 0, 61_000, () => next() * 60);
    expect(starts.length).toBeGreaterThanOrEqual(285);
    expect(mostInWindow(starts, 1_000)).toBeLessThanOrEqual(5);
  });

  it("never bunches: starts come half an interval apart at least, even right after a stall", () => {
    const p = startPace(perSecond(10), 0);
    const starts = run(p, 0, 8_000, (i) => (i === 10 ? 3_000 : 0));
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(50);
    expect(starts.length).toBeGreaterThan(20);
  });

  it("above 1000 per period keeps no starts and spaces attempts one interval apart", () => {
    const p = startPace({ count: 6_000, per: "minute" }, 0);
    expect(nextStartAt(p)).toBe(10);
    const starts = run(p, 0, 1_000, (i) => (i % 2 ? 3 : 0));
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(10);
    expect(p.starts).toEqual([]);
  });

  it("under a changed limit keeps the latest starts and counts them against the new one", () => {
    const p = startPace(perSecond(10), 0);
    const before = run(p, 0, 2_000, () => 0);
    const q = repace(p, perSecond(2), 0);
    const after = run(q, 2_000, 5_000, () => 0);
    expect(
      mostInWindow(
        [...before, ...after].filter((t) => t >= 2_000 - 1_000),
        1_000,
      ),
    ).toBeGreaterThan(2);
    // The new limit holds for every window that ends after the change.
    const all = [...before, ...after];
    for (const t of after) expect(all.filter((s) => s > t - 1_000 && s <= t).length).toBeLessThanOrEqual(2);
  });

  it("is idle once nothing it remembers can hold an attempt back", () => {
    const p = startPace(perSecond(5), 0);
    expect(paceIdle(p, 999)).toBe(false);
    expect(paceIdle(p, 1_000)).toBe(true);
    paceStarted(p, 1_000);
    expect(paceIdle(p, 1_999)).toBe(false);
    expect(paceIdle(p, 2_000)).toBe(true);
  });
});
