import { describe, expect, it } from "vitest";
import { carriedWork } from "../../../src/app/engine/carried.ts";
import { holds } from "../../../src/app/engine/holds.ts";
import { dueQueue } from "../../../src/app/engine/queue.ts";
import type { StoredEvent } from "../../../src/app/ports/events.ts";
import type { Delivery } from "../../../src/domain/delivery.ts";

let n = 0;
const delivery = (webhookId: string, attempt = 1) =>
  ({ id: `d${++n}`, webhookId, status: "pending", attempt, scheduledAt: new Date(n) }) as Delivery;
const event = { id: "ev_1" } as StoredEvent;
const work = (...deliveries: Delivery[]) => ({ event, deliveries });
const tick = () => new Promise((r) => setImmediate(r));

function setup(o: { mine?: boolean; generation?: number; fifo?: boolean; queueSize?: number } = {}) {
  const state = { mine: o.mine ?? true, generation: o.generation ?? 1, mayClaim: true, running: true };
  const barriers: (() => void)[] = [];
  const queue = dueQueue({ depth: 10, maxAgeMs: 10_000 });
  const held = holds();
  const remembered: StoredEvent[] = [];
  const c = carriedWork(
    {
      signals: { barrier: () => new Promise<void>((r) => barriers.push(r)) },
      ownership: {
        tenure: () => (state.mine ? { generation: state.generation, since: 0 } : null),
        mayClaim: () => state.mayClaim,
      },
      fifo: { isFifo: () => o.fifo ?? false },
      holds: held,
      queue,
      queueSize: o.queueSize ?? 100,
      running: () => state.running,
      remember: (e) => void remembered.push(e),
    },
    { clearEveryMs: 60_000, clearAt: 3 },
  );
  /** Settles the shard's tenure: the first carried work asks for a barrier, which resolves. */
  async function settle() {
    c.take(work(delivery("ep_1")));
    expect(barriers.length).toBe(1);
    barriers.shift()!();
    await tick();
  }
  return { c, state, barriers, queue, held, remembered, settle };
}

describe("carried work", () => {
  it("is queued and held once the shard's tenure is settled, with its event remembered", async () => {
    const { c, queue, held, remembered, settle } = setup();
    await settle();
    const d = delivery("ep_1");
    expect([...c.take(work(d)).unread]).toEqual([]);
    expect(queue.size).toBe(1);
    expect(held.has(d.id)).toBe(true);
    expect(remembered).toEqual([event]);
  });

  it("is left to a read until a barrier started after the shard was taken has resolved", async () => {
    const { c, barriers, queue } = setup();
    const d = delivery("ep_1");
    expect([...c.take(work(d)).unread]).toEqual(["ep_1"]);
    expect(queue.size).toBe(0);
    // Heard again before the barrier resolves: still read, and no second barrier.
    expect([...c.take(work(delivery("ep_1"))).unread]).toEqual(["ep_1"]);
    expect(barriers.length).toBe(1);
    barriers.shift()!();
    await tick();
    expect([...c.take(work(delivery("ep_1"))).unread]).toEqual([]);
    expect(queue.size).toBe(1);
  });

  it("asks again when the shard is held under a new generation (lost and taken back)", async () => {
    const { c, state, barriers, settle } = setup();
    await settle();
    state.generation = 2;
    expect([...c.take(work(delivery("ep_1"))).unread]).toEqual(["ep_1"]);
    expect(barriers.length).toBe(1);
  });

  it("never takes what this process took another way until a barrier started after that resolved", async () => {
    const { c, barriers, queue, settle } = setup();
    await settle();
    const d = delivery("ep_1");
    // Read (or handed over by a publish here), sent, recorded and let go: its announcement comes late.
    c.tookOtherwise([d]);
    expect([...c.take(work(d)).unread]).toEqual([]);
    expect(queue.size).toBe(0);
    expect(c.remembered).toBe(1);
    // Enough remembered: a barrier starts. It clears what was taken before it started, not after.
    c.tookOtherwise([delivery("ep_1"), delivery("ep_1")]);
    expect(barriers.length).toBe(1);
    const later = delivery("ep_1");
    c.tookOtherwise([later]);
    barriers.shift()!();
    await tick();
    expect(c.remembered).toBe(1);
    expect([...c.take(work(later)).unread]).toEqual([]);
    expect(queue.size).toBe(0);
    // Cleared: its announcement came before the barrier's marker, if there was one.
    expect([...c.take(work(d)).unread]).toEqual([]);
    expect(queue.size).toBe(1);
  });

  it("remembers only first attempts (only they are carried)", () => {
    const { c } = setup();
    c.tookOtherwise([delivery("ep_1", 2)]);
    expect(c.remembered).toBe(0);
  });

  it("skips what is held, without a read", async () => {
    const { c, held, queue, settle } = setup();
    await settle();
    const d = delivery("ep_1");
    held.hold(d);
    expect([...c.take(work(d)).unread]).toEqual([]);
    expect(queue.size).toBe(0);
  });

  it("leaves to a read a FIFO endpoint's work, a shard it may not claim now, a full queue, a stopped engine", async () => {
    const fifo = setup({ fifo: true });
    await fifo.settle();
    expect([...fifo.c.take(work(delivery("ep_1"))).unread]).toEqual(["ep_1"]);
    const s = setup();
    await s.settle();
    s.state.mayClaim = false;
    expect([...s.c.take(work(delivery("ep_1"))).unread]).toEqual(["ep_1"]);
    s.state.mayClaim = true;
    s.state.running = false;
    expect([...s.c.take(work(delivery("ep_1"))).unread]).toEqual(["ep_1"]);
    const full = setup({ queueSize: 1 });
    await full.settle();
    expect([...full.c.take(work(delivery("ep_1"), delivery("ep_1"))).unread]).toEqual(["ep_1"]);
    expect(full.queue.size).toBe(1);
  });

  it("ignores work of shards this process does not hold", () => {
    const { c, queue, barriers } = setup({ mine: false });
    expect([...c.take(work(delivery("ep_1"))).unread]).toEqual([]);
    expect(queue.size).toBe(0);
    expect(barriers.length).toBe(0);
  });

  it("forgets everything when no barrier comes back for long, and takes nothing until one started after that does", async () => {
    const { c, barriers, queue, settle } = setup();
    await settle();
    // clearAt 3: a barrier starts at 3 remembered, and never resolves (the channel is down).
    const first = delivery("ep_1");
    c.tookOtherwise([first, delivery("ep_1"), delivery("ep_1")]);
    expect(barriers.length).toBe(1);
    c.tookOtherwise(Array.from({ length: 13 }, () => delivery("ep_1")));
    expect(c.remembered).toBe(0);
    // Forgotten, so it could be taken twice: nothing carried is taken now, not even what is new.
    expect([...c.take(work(first)).unread]).toEqual(["ep_1"]);
    expect([...c.take(work(delivery("ep_1"))).unread]).toEqual(["ep_1"]);
    // The barrier on its way started before the memory was dropped: it is not enough.
    barriers.shift()!();
    await tick();
    expect([...c.take(work(first)).unread]).toEqual(["ep_1"]);
    expect(barriers.length).toBe(1);
    barriers.shift()!();
    await tick();
    expect([...c.take(work(delivery("ep_1"))).unread]).toEqual([]);
    expect(queue.size).toBe(1);
  });
});
