import { afterEach, describe, expect, it } from "vitest";
import { livenessTiming, processLiveness } from "../../../src/app/engine/liveness.ts";
import { silentLogger } from "../../../src/app/logger.ts";
import type { Liveness } from "../../../src/app/ports/shards.ts";
import { manualClock } from "../../support/engine-harness.ts";
import { until } from "../../support/until.ts";

let stop: (() => void) | null = null;
afterEach(() => {
  stop?.();
  stop = null;
});

/** A store of the kind given whose proofs the test answers; time moves only when the test moves it. */
function proving(kind: Liveness, timing = livenessTiming(kind)) {
  const state = {
    holds: [] as boolean[],
    beats: [] as Date[],
    lost: 0,
    regained: 0,
    time: 0,
    fail: false,
    calls: 0,
  };
  const clock = manualClock();
  const life = processLiveness(
    {
      shards: {
        liveness: kind,
        async hold() {
          state.calls++;
          if (state.fail) throw new Error("connection lost");
          return state.holds.shift() ?? true;
        },
        async beat(_id, expiresAt) {
          state.calls++;
          if (state.fail) throw new Error("unreachable");
          state.beats.push(expiresAt);
        },
      },
      clock,
      logger: silentLogger,
      processId: "p",
      lost: () => state.lost++,
      regained: () => state.regained++,
      monotonic: () => state.time,
    },
    // Proofs every 5 ms of real time where the kind has any.
    { ...timing, everyMs: timing.everyMs > 0 ? 5 : 0 },
  );
  stop = () => life.stop();
  return { life, state, clock };
}

describe("this process's proof of life", () => {
  it("session: valid for validMs after a proof began; a hold that had to take the lock again counts every shard lost", async () => {
    const { life, state } = proving("session");
    expect(life.valid()).toBe(false);
    state.holds.push(false);
    await life.start();
    expect(state.lost).toBe(1);
    expect(life.valid()).toBe(true);
    state.time = 1_499;
    expect(life.valid()).toBe(true);
    state.time = 1_500;
    expect(life.valid()).toBe(false);
    // A hold on the same session: valid again, nothing lost.
    const calls = state.calls;
    await until(() => state.calls > calls + 1);
    expect(life.valid()).toBe(true);
    expect(state.lost).toBe(1);
    // The session ended meanwhile: lost again.
    state.holds.push(false);
    await until(() => state.lost === 2);
  });

  it("session: a proof from the ownership round keeps it valid and stands in for the next check", async () => {
    const { life, state } = proving("session");
    // Before the first check has held, a round's proof counts for nothing: the check must take the lock.
    life.proven(0);
    expect(life.valid()).toBe(false);
    await life.start();
    state.time = 1_000;
    life.proven(1_000);
    state.time = 2_400;
    expect(life.valid()).toBe(true);
    // No check while the round's proof is recent (90% of everyMs: 4.5 ms of the test's 5): the clock
    // stands still, so it stays recent.
    state.time = 1_004;
    const calls = state.calls;
    await new Promise((r) => setTimeout(r, 60));
    expect(state.calls).toBe(calls);
    // Once it is older, the checks run again; a proof older than the last one changes nothing.
    state.time = 1_005;
    await until(() => state.calls > calls);
    life.proven(500);
    state.time = 1_005 + 1_499;
    expect(life.valid()).toBe(true);
    state.time = 1_005 + 1_500;
    expect(life.valid()).toBe(false);
  });

  it("a proof that fails starts no sends once its validity ran out, and loses nothing by itself", async () => {
    const { life, state } = proving("session");
    await life.start();
    state.fail = true;
    state.time = 10_000;
    const calls = state.calls;
    await until(() => state.calls > calls + 2);
    expect(life.valid()).toBe(false);
    expect(state.lost).toBe(0);
  });

  it("a proof that holds again after its validity ran out says so (sends may start: the engine reads again); one in time does not", async () => {
    const timing = livenessTiming("heartbeat");
    const { life, state } = proving("heartbeat", timing);
    await life.start();
    const lostAtStart = state.lost;
    // Proofs in time: valid throughout, nothing to tell.
    let calls = state.calls;
    await until(() => state.calls > calls + 2);
    expect(state.regained).toBe(0);
    // A slow or failing store: validity runs out, yet not long enough for the heartbeat to expire.
    state.fail = true;
    state.time += timing.validMs;
    calls = state.calls;
    await until(() => state.calls > calls + 1);
    expect(life.valid()).toBe(false);
    expect(state.regained).toBe(0);
    state.fail = false;
    await until(() => life.valid());
    expect(state.regained).toBe(1);
    expect(state.lost).toBe(lostAtStart);
    calls = state.calls;
    await until(() => state.calls > calls + 2);
    expect(state.regained).toBe(1);
  });

  it("heartbeat: beats with a short expiry; a beat that comes too late to have kept it alive counts every shard lost", async () => {
    const timing = livenessTiming("heartbeat");
    const { life, state, clock } = proving("heartbeat", timing);
    await life.start();
    expect(state.beats[0]).toEqual(new Date(clock.now().getTime() + timing.expiresMs));
    const lostAtStart = state.lost;
    state.time = timing.validMs - 1;
    expect(life.valid()).toBe(true);
    // In time (before the heartbeat could be read expired, less the skew allowed): nothing lost.
    let beats = state.beats.length;
    await until(() => state.beats.length > beats);
    expect(state.lost).toBe(lostAtStart);
    // Frozen past the heartbeat: others may have taken its shards.
    state.time += timing.expiresMs;
    expect(life.valid()).toBe(false);
    beats = state.beats.length;
    await until(() => state.lost === lostAtStart + 1);
    expect(life.valid()).toBe(true);
  });

  it("lease and sole stores need no proof of their own: always valid until stopped", async () => {
    for (const kind of ["lease", "sole"] as const) {
      const { life, state } = proving(kind, livenessTiming(kind));
      await life.start();
      expect(life.valid()).toBe(true);
      expect(state.calls).toBe(0);
      life.stop();
      expect(life.valid()).toBe(false);
    }
  });
});
