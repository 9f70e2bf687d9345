import { describe, expect, it } from "vitest";
import { SAME_STOP_WITHIN_MS, stopSignals } from "../../src/main/signals.ts";

// The rule that tells npm's echo of a Ctrl-C from a person's second Ctrl-C (ADR 28), on a clock of the
// test's own. Whichever signal comes first (the terminal's or npm's) starts the stop; what follows within
// the window is the same stop; later, "now".
describe("stop signals", () => {
  const clock = () => {
    let t = 1_000_000;
    return { now: () => t, advance: (ms: number) => (t += ms) };
  };

  it("the first signal asks for a graceful stop", () => {
    const c = clock();
    expect(stopSignals(c.now)()).toBe("graceful");
  });

  it("npm's echo, 4–11 ms later (or at the same moment), is the same stop", () => {
    for (const gap of [0, 4, 11]) {
      const c = clock();
      const signal = stopSignals(c.now);
      expect(signal()).toBe("graceful");
      c.advance(gap);
      expect(signal(), `${gap} ms later`).toBe("echo");
    }
  });

  it("anything up to the window's end is the same stop: a late echo, and a group's SIGTERM beside SIGINT", () => {
    const c = clock();
    const signal = stopSignals(c.now);
    signal();
    c.advance(200);
    expect(signal()).toBe("echo");
    c.advance(SAME_STOP_WITHIN_MS - 200);
    expect(signal()).toBe("echo");
  });

  it("a signal after the window means now, a person's second Ctrl-C", () => {
    const c = clock();
    const signal = stopSignals(c.now);
    signal();
    c.advance(SAME_STOP_WITHIN_MS + 1);
    expect(signal()).toBe("now");
  });

  it("the window counts from the first signal: signals that keep coming end in one now", () => {
    const c = clock();
    const signal = stopSignals(c.now);
    signal();
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) {
      c.advance(SAME_STOP_WITHIN_MS / 2);
      seen.push(signal());
    }
    expect(seen).toEqual(["echo", "echo", "now", "echo"]);
  });

  it("a person's second Ctrl-C brings its own echo: one now", () => {
    const c = clock();
    const signal = stopSignals(c.now);
    signal();
    c.advance(5);
    expect(signal()).toBe("echo");
    c.advance(1_500);
    expect(signal()).toBe("now");
    c.advance(6);
    expect(signal()).toBe("echo");
  });

  it("the window is wide for npm's measured echo and narrow for a person", () => {
    expect(SAME_STOP_WITHIN_MS).toBeGreaterThanOrEqual(20 * 11);
    expect(SAME_STOP_WITHIN_MS).toBeLessThanOrEqual(1_000);
  });
});
