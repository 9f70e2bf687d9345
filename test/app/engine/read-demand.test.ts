import { describe, expect, it } from "vitest";
import { readDemand } from "../../../src/app/engine/read-demand.ts";
import type { DueSignals, HandedWork } from "../../../src/app/ports/store.ts";

/** A queue whose lanes the test sets: `full` endpoints have enough queued, `low` says it runs low. */
function lanes() {
  const state = { low: false, full: new Set<string>(), cut: [] as string[] };
  return {
    state,
    queue: {
      runningLow: () => state.low,
      isFull: (id: string) => state.full.has(id),
      markCut: (id: string) => void state.cut.push(id),
    },
  };
}

describe("whether the database must be read", () => {
  it("starts wanting a read; a read settles it until new work may be there", () => {
    const { queue } = lanes();
    const d = readDemand(queue);
    expect(d.mustRead()).toBe(true);
    d.reading();
    expect(d.mustRead()).toBe(false);
    expect(d.pending()).toBe(false);
    d.all();
    expect(d.pending()).toBe(true);
    expect(d.mustRead()).toBe(true);
  });

  it("a queue running low asks for a read", () => {
    const { queue, state } = lanes();
    const d = readDemand(queue);
    d.reading();
    state.low = true;
    expect(d.mustRead()).toBe(true);
  });

  it("work for an endpoint is read unless its lane is full; a full lane is marked cut and read when it runs low", () => {
    const { queue, state } = lanes();
    const d = readDemand(queue);
    d.reading();
    state.full.add("full");
    d.endpoint("full");
    expect(d.pending()).toBe(true);
    expect(d.mustRead()).toBe(false);
    expect(state.cut).toEqual(["full"]);
    // Settled: no longer pending.
    expect(d.pending()).toBe(false);
    d.endpoint("open");
    expect(d.mustRead()).toBe(true);
    d.reading();
    expect(d.mustRead()).toBe(false);
  });

  it("hears other processes' signals only for the endpoints it owns, until it stops listening", () => {
    const { queue } = lanes();
    const d = readDemand(queue);
    d.reading();
    let heard: ((ids: readonly string[], work: HandedWork | null) => void) | null = null;
    const signals: DueSignals = {
      live: true,
      announce: () => {},
      listen(h) {
        heard = h;
        return () => {
          heard = null;
        };
      },
    };
    let wakes = 0;
    d.listen(
      signals,
      (id) => id === "mine",
      () => wakes++,
    );
    heard!(["theirs"], null);
    expect(wakes).toBe(0);
    expect(d.mustRead()).toBe(false);
    heard!(["theirs", "mine"], null);
    expect(wakes).toBe(1);
    expect(d.mustRead()).toBe(true);
    d.unlisten();
    expect(heard).toBe(null);
  });

  it("reads only the endpoints whose carried work was not taken, and claims at once what was", () => {
    const { queue } = lanes();
    const d = readDemand(queue);
    d.reading();
    let heard: ((ids: readonly string[], work: HandedWork | null) => void) | null = null;
    const signals: DueSignals = {
      live: true,
      announce: () => {},
      listen(h) {
        heard = h;
        return () => {};
      },
    };
    const wakes: boolean[] = [];
    let answer = { unread: new Set<string>(), queued: true };
    d.listen(
      signals,
      () => true,
      (taken) => void wakes.push(taken),
      () => answer,
    );
    const work = {} as HandedWork;
    heard!(["a", "b"], work);
    expect(wakes).toEqual([true]);
    expect(d.mustRead()).toBe(false);
    answer = { unread: new Set(["b"]), queued: true };
    heard!(["a", "b"], work);
    expect(wakes).toEqual([true, false]);
    expect(d.mustRead()).toBe(true);
    d.reading();
    // Nothing taken and nothing to read (work of others' shards, or this process's own): no claim.
    answer = { unread: new Set(), queued: false };
    heard!(["a"], work);
    expect(wakes).toHaveLength(2);
    expect(d.mustRead()).toBe(false);
  });
});
