import { describe, expect, it } from "vitest";
import { storeLiveness } from "../../../src/adapters/mongo/liveness.ts";

// The liveness verdict of ADR 0010, driven by hand: a fake clock and scripted probes.
function harness() {
  let now = 0;
  const state = { own: true, fresh: true, ownHangs: false, ownCalls: 0, freshCalls: 0 };
  const changes: (string | null)[] = [];
  const l = storeLiveness({
    pingOwn: () => {
      state.ownCalls++;
      if (state.ownHangs) return new Promise(() => {});
      return state.own ? Promise.resolve() : Promise.reject(new Error("own client fails"));
    },
    pingFresh: () => {
      state.freshCalls++;
      return state.fresh ? Promise.resolve() : Promise.reject(new Error("refused"));
    },
    everyMs: 5_000,
    wedgedAfterMs: 60_000,
    probeTimeoutMs: 20,
    now: () => now,
    onChange: (w) => changes.push(w),
    timer: false,
  });
  return {
    l,
    state,
    changes,
    advance: (ms: number) => {
      now += ms;
    },
    /** Checks every 5 s for `ms`. */
    async run(ms: number) {
      for (let t = 0; t < ms; t += 5_000) {
        now += 5_000;
        await l.check();
      }
    },
  };
}

describe("store liveness", () => {
  it("probes nothing while commands succeed", async () => {
    const h = harness();
    for (let i = 0; i < 20; i++) {
      h.advance(4_000);
      h.l.noteSuccess();
      await h.l.check();
    }
    expect(h.state.ownCalls + h.state.freshCalls).toBe(0);
    expect(h.l.wedged()).toBeNull();
  });

  it("a database outage, however long, is not a wedge: fresh connections fail too", async () => {
    const h = harness();
    h.state.own = false;
    h.state.fresh = false;
    await h.run(30 * 60_000);
    expect(h.l.wedged()).toBeNull();
    expect(h.changes).toEqual([]);
  });

  it("own client failing while fresh connections succeed: wedged after wedgedAfterMs, not before", async () => {
    const h = harness();
    h.state.own = false;
    await h.run(5_000); // first divergence seen here
    await h.run(55_000);
    expect(h.l.wedged()).toBeNull();
    await h.run(5_000);
    expect(h.l.wedged()).toMatch(/answers new connections.*failed every command for 60 s/);
    // And live again once the own client works (a restart was not needed after all).
    h.state.own = true;
    await h.run(5_000);
    expect(h.l.wedged()).toBeNull();
    expect(h.changes).toHaveLength(2);
  });

  it("a hanging own command counts as failing (bounded by probeTimeoutMs)", async () => {
    const h = harness();
    h.state.ownHangs = true;
    await h.run(70_000);
    expect(h.l.wedged()).not.toBeNull();
  });

  it("the divergence must be continuous: an outage in between starts the count again", async () => {
    const h = harness();
    h.state.own = false;
    await h.run(40_000);
    h.state.fresh = false;
    await h.run(5_000);
    h.state.fresh = true;
    await h.run(40_000);
    expect(h.l.wedged()).toBeNull();
    await h.run(25_000);
    expect(h.l.wedged()).not.toBeNull();
  });
});
