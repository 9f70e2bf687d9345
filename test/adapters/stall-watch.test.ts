import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { stallWatch } from "../../src/adapters/stall-watch.ts";
import { StoreUnavailableError } from "../../src/app/ports/store.ts";

// The stall watch on a fake clock: a call waiting on a database that answers nothing is answered
// StoreUnavailableError after it stalled and one probe failed; a call that is only slow is never given
// up while the database answers (ADR 10).
describe("stall watch", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const never = () => new Promise<never>(() => {});
  /** A probe the test answers: `answer(true)` says the database answers, `answer(false)` that it does not. */
  const controlledProbe = () => {
    const calls: number[] = [];
    let answer: (ok: boolean) => void = () => {};
    const probe = (deadlineMs: number) => {
      calls.push(deadlineMs);
      return new Promise<void>((resolve, reject) => {
        answer = (ok) => (ok ? resolve() : reject(new StoreUnavailableError()));
      });
    };
    return { probe, calls, answer: (ok: boolean) => answer(ok) };
  };

  it("passes a call's answer and error through", async () => {
    const watch = stallWatch({ probe: async () => {}, stallMs: 500 });
    await expect(watch.run(async () => 42)).resolves.toBe(42);
    const bad = new Error("syntax error");
    await expect(watch.run(async () => Promise.reject(bad))).rejects.toBe(bad);
  });

  it("a call on a database that answers nothing is given up once the probe fails, saying how long it waited", async () => {
    const p = controlledProbe();
    const watch = stallWatch({ probe: p.probe, stallMs: 500, probeDeadlineMs: 1_000 });
    const call = watch.run(never);
    const outcome = call.then(
      () => "answered",
      (e: Error) => e,
    );
    await vi.advanceTimersByTimeAsync(499);
    expect(p.calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(p.calls, "one probe, with its deadline").toEqual([1_000]);
    await vi.advanceTimersByTimeAsync(700);
    p.answer(false);
    const e = await outcome;
    expect(e).toBeInstanceOf(StoreUnavailableError);
    expect((e as Error).message).toBe("the database answered nothing for 1200 ms: gave up waiting");
  });

  it("a slow call is not given up while the probe says the database answers", async () => {
    const p = controlledProbe();
    const watch = stallWatch({ probe: p.probe, stallMs: 500 });
    let finish: (v: string) => void = () => {};
    const call = watch.run(() => new Promise<string>((r) => (finish = r)));
    let settled = false;
    void call.finally(() => (settled = true)).catch(() => {});
    for (let i = 0; i < 5; i++) {
      await vi.advanceTimersByTimeAsync(500);
      p.answer(true);
      await vi.advanceTimersByTimeAsync(0);
    }
    expect(settled).toBe(false);
    expect(p.calls.length, "asked again after each stall").toBeGreaterThanOrEqual(2);
    finish("done");
    await expect(call).resolves.toBe("done");
  });

  it("no probe while other calls succeed: the database answers", async () => {
    const p = controlledProbe();
    const watch = stallWatch({ probe: p.probe, stallMs: 500 });
    const slow = watch.run(never);
    void slow.catch(() => {});
    for (let i = 0; i < 10; i++) {
      await vi.advanceTimersByTimeAsync(200);
      await watch.run(async () => "fast");
    }
    expect(p.calls).toEqual([]);
  });

  it("a call that began just after another's success is asked about stallMs after that success", async () => {
    const p = controlledProbe();
    const watch = stallWatch({ probe: p.probe, stallMs: 500 });
    void watch.run(never).catch(() => {});
    await vi.advanceTimersByTimeAsync(300);
    await watch.run(async () => "answered");
    await vi.advanceTimersByTimeAsync(499);
    expect(p.calls, "not before stallMs without a success").toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(p.calls, "at 800 ms, not at 1,000").toHaveLength(1);
  });

  it("a readiness ping's success counts as the database answering", async () => {
    const p = controlledProbe();
    const watch = stallWatch({ probe: p.probe, stallMs: 500 });
    void watch.run(never).catch(() => {});
    for (let i = 0; i < 10; i++) {
      await vi.advanceTimersByTimeAsync(200);
      watch.noteSuccess();
    }
    expect(p.calls).toEqual([]);
  });

  it("a probe that fails after another call got an answer gives nothing up: the database is back", async () => {
    const p = controlledProbe();
    let unanswered = 0;
    const watch = stallWatch({ probe: p.probe, stallMs: 500, onUnanswered: () => unanswered++ });
    let settled = false;
    const call = watch.run(never);
    void call.finally(() => (settled = true)).catch(() => {});
    await vi.advanceTimersByTimeAsync(500);
    expect(p.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(100);
    await watch.run(async () => "answered");
    p.answer(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    expect(unanswered).toBe(0);
  });

  it("a probe that says no is told once, before the calls are answered", async () => {
    const p = controlledProbe();
    const order: string[] = [];
    const watch = stallWatch({ probe: p.probe, stallMs: 500, onUnanswered: () => order.push("unanswered") });
    const calls = [1, 2, 3].map(() => watch.run(never).catch(() => order.push("answered")));
    await vi.advanceTimersByTimeAsync(500);
    p.answer(false);
    await Promise.all(calls);
    expect(order).toEqual(["unanswered", "answered", "answered", "answered"]);
  });

  it("calls stalled together share one probe and are all given up by it", async () => {
    const p = controlledProbe();
    const watch = stallWatch({ probe: p.probe, stallMs: 500 });
    const calls = Array.from({ length: 20 }, () => watch.run(never).catch((e: unknown) => e));
    await vi.advanceTimersByTimeAsync(500);
    expect(p.calls).toHaveLength(1);
    p.answer(false);
    const outcomes = await Promise.all(calls);
    expect(outcomes.every((e) => e instanceof StoreUnavailableError)).toBe(true);
  });

  it("a call that answers after it was given up changes nothing", async () => {
    const p = controlledProbe();
    const watch = stallWatch({ probe: p.probe, stallMs: 500 });
    let finish: (v: string) => void = () => {};
    const call = watch.run(() => new Promise<string>((r) => (finish = r)));
    const outcome = call.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(500);
    p.answer(false);
    expect(await outcome).toBeInstanceOf(StoreUnavailableError);
    finish("late");
    await vi.advanceTimersByTimeAsync(0);
  });
});
