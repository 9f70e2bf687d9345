import { afterEach, describe, expect, it } from "vitest";
import { claimLoop } from "../../../src/app/engine/claim-loop.ts";
import { silentLogger } from "../../../src/app/logger.ts";
import { until } from "../../support/until.ts";

let stop: (() => Promise<void>) | null = null;
afterEach(async () => {
  await stop?.();
  stop = null;
});

function looping(o: { reads?: boolean; claimDelayMs?: number } = {}) {
  const state = { claims: 0, more: 0, room: true, settled: 0, reads: o.reads ?? false, time: 0 };
  let release: (() => void) | null = null;
  const loop = claimLoop(
    {
      async claimOnce() {
        state.claims++;
        if (release === null && state.more < 0) await new Promise<void>((r) => (release = r));
        return state.more-- > 0;
      },
      mayTake: () => state.room,
      reads: () => state.reads,
      settled: () => state.settled++,
      logger: silentLogger,
      now: () => state.time,
    },
    { claimDelayMs: o.claimDelayMs ?? 1 },
  );
  stop = () => loop.stop();
  return { loop, state, unblock: () => release?.() };
}

describe("the claim loop", () => {
  it("claims nothing until started, and nothing after a stop", async () => {
    const { loop, state } = looping();
    loop.now();
    loop.soon();
    await new Promise((r) => setTimeout(r, 10));
    expect(state.claims).toBe(0);
    loop.start();
    loop.now();
    await until(() => state.settled === 1);
    expect(state.claims).toBe(1);
    await loop.stop();
    loop.now();
    loop.soon();
    await new Promise((r) => setTimeout(r, 10));
    expect(state.claims).toBe(1);
  });

  it("goes on claiming while a claim says more could be taken and the engine may take work", async () => {
    const { loop, state } = looping();
    loop.start();
    state.more = 3;
    loop.now();
    await until(() => state.settled === 1);
    // Three answered "more", the fourth did not.
    expect(state.claims).toBe(4);
    state.more = 5;
    state.room = false;
    loop.now();
    await until(() => state.settled === 2);
    expect(state.claims).toBe(4);
  });

  it("a wake during a round runs one more round after it, not a second one beside it", async () => {
    const { loop, state, unblock } = looping();
    loop.start();
    state.more = -1;
    loop.now();
    expect(loop.pumping).toBe(true);
    loop.now();
    loop.now();
    expect(state.claims).toBe(1);
    unblock();
    await until(() => state.settled === 1);
    expect(state.claims).toBe(2);
    expect(loop.pumping).toBe(false);
  });

  it("spaces a claim that reads by twice the last read's time after it ended; one that does not read is not", async () => {
    const { loop, state } = looping({ reads: true, claimDelayMs: 1 });
    loop.start();
    // The last read took 40 ms and ended at 0: the next reading claim waits until 80.
    loop.measured(-40, 0);
    expect(loop.lastReadMs).toBe(40);
    loop.soon();
    await new Promise((r) => setTimeout(r, 30));
    expect(state.claims).toBe(0);
    // A hand-over that will not read brings the claim forward, at once.
    state.reads = false;
    loop.soon(true);
    await until(() => state.claims === 1);
    await until(() => state.settled === 1);
    await new Promise((r) => setTimeout(r, 100));
    // The earlier timer was replaced, not kept beside it.
    expect(state.claims).toBe(1);
  });

  it("a claim that throws ends the round; the next wake claims again", async () => {
    let calls = 0;
    const loop = claimLoop(
      {
        async claimOnce() {
          calls++;
          if (calls === 1) throw new Error("read failed");
          return false;
        },
        mayTake: () => true,
        reads: () => false,
        settled: () => {},
        logger: silentLogger,
      },
      { claimDelayMs: 1 },
    );
    stop = () => loop.stop();
    loop.start();
    loop.now();
    await until(() => !loop.pumping && calls === 1);
    loop.now();
    await until(() => calls === 2);
  });
});
