import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DeadlineQueue } from "../../../src/adapters/delivery/deadlines.ts";

describe("DeadlineQueue: one timer for many exchanges with the same limit", () => {
  let now = 0;
  const clock = () => now;
  const advance = async (ms: number) => {
    now += ms;
    await vi.advanceTimersByTimeAsync(ms);
  };

  beforeEach(() => {
    vi.useFakeTimers();
    now = 0;
  });
  afterEach(() => vi.useRealTimers());

  it("expires each unsettled exchange once its own limit has passed, in order", async () => {
    const q = new DeadlineQueue(100, clock);
    const fired: string[] = [];
    q.watch(() => fired.push("a"));
    await advance(30);
    q.watch(() => fired.push("b"));
    await advance(69);
    expect(fired).toEqual([]);
    await advance(1);
    expect(fired).toEqual(["a"]);
    await advance(29);
    expect(fired).toEqual(["a"]);
    await advance(1);
    expect(fired).toEqual(["a", "b"]);
    expect(q.size).toBe(0);
  });

  it("never fires a settled exchange, and keeps timing the ones behind it", async () => {
    const q = new DeadlineQueue(100, clock);
    const fired: string[] = [];
    const a = q.watch(() => fired.push("a"));
    await advance(10);
    q.watch(() => fired.push("b"));
    await advance(10);
    const c = q.watch(() => fired.push("c"));
    a.settle();
    c.settle();
    await advance(200);
    expect(fired).toEqual(["b"]);
    expect(q.size).toBe(0);
  });

  it("runs an expiry at most once, and uses a single timer however many are watched", async () => {
    const q = new DeadlineQueue(50, clock);
    const spy = vi.spyOn(globalThis, "setTimeout");
    let fired = 0;
    const ds = Array.from({ length: 1_000 }, () => q.watch(() => fired++));
    expect(spy).toHaveBeenCalledTimes(1);
    await advance(50);
    expect(fired).toBe(1_000);
    for (const d of ds) d.expire();
    expect(fired).toBe(1_000);
    spy.mockRestore();
  });

  it("re-arms after going idle", async () => {
    const q = new DeadlineQueue(20, clock);
    let fired = 0;
    q.watch(() => fired++).settle();
    await advance(50);
    q.watch(() => fired++);
    await advance(19);
    expect(fired).toBe(0);
    await advance(1);
    expect(fired).toBe(1);
  });
});
