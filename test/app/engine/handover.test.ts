import { describe, expect, it } from "vitest";
import { HANDOVER_FRESH_MS, handover } from "../../../src/app/engine/handover.ts";
import { holds } from "../../../src/app/engine/holds.ts";
import { dueQueue } from "../../../src/app/engine/queue.ts";
import type { AcceptedWork } from "../../../src/app/ports/sending.ts";
import type { Delivery } from "../../../src/domain/delivery.ts";
import type { Endpoint } from "../../../src/domain/endpoint.ts";
import { shardOf } from "../../../src/domain/shards.ts";

const endpoint = (id: string, ordering: "fifo" | "none" = "none") => ({ id, ordering }) as Endpoint;
let n = 0;
const delivery = (webhookId: string) =>
  ({ id: `d${++n}`, webhookId, status: "pending", scheduledAt: new Date(n) }) as Delivery;

function setup(o: { mine?: (shard: number) => boolean; live?: boolean; queueSize?: number } = {}) {
  const queue = dueQueue({ depth: 10, maxAgeMs: 10_000 });
  const held = holds();
  const unread: string[] = [];
  const announced: string[][] = [];
  const time = { now: 0 };
  const mine = o.mine ?? (() => true);
  const h = handover({
    queue,
    queueSize: o.queueSize ?? 100,
    signals: o.live === undefined ? null : { live: o.live, announce: (ids) => void announced.push([...ids]) },
    running: () => true,
    ownership: { tenure: (s) => (mine(s) ? { generation: 1, since: 0 } : null), mayClaim: mine },
    fifo: { isFifo: () => false },
    holds: held,
    unread: (id) => void unread.push(id),
    now: () => time.now,
  });
  return { h, queue, held, unread, announced, time };
}

const work = (endpoints: Endpoint[], deliveries: Delivery[]) =>
  ({ event: {}, endpoints, deliveries }) as unknown as AcceptedWork;

describe("the publish hand-over", () => {
  it("queues and holds a publish's first deliveries with the endpoint it read, fresh for a second", () => {
    const { h, queue, held, unread, time } = setup();
    const d1 = delivery("ep_1");
    const d2 = delivery("ep_1");
    h.accept(work([endpoint("ep_1")], [d1, d2]));
    expect(queue.size).toBe(2);
    expect(held.has(d1.id) && held.has(d2.id)).toBe(true);
    expect(unread).toEqual([]);
    expect(h.claim(d1, time.now + HANDOVER_FRESH_MS)).toEqual({ delivery: d1, endpoint: endpoint("ep_1") });
    // Taken later than that: its endpoint is read again; and a claim forgets the entry.
    expect(h.claim(d2, time.now + HANDOVER_FRESH_MS + 1)).toEqual({ delivery: d2 });
    expect(h.claim(d1, 0)).toEqual({ delivery: d1 });
    expect(h.size).toBe(0);
  });

  it("leaves to the due read what it may not queue: FIFO endpoints, unknown endpoints, a full queue", () => {
    const { h, queue, unread } = setup({ queueSize: 1 });
    h.accept(
      work(
        [endpoint("ep_f", "fifo"), endpoint("ep_1")],
        [delivery("ep_f"), delivery("ep_x"), delivery("ep_1")],
      ),
    );
    expect(queue.size).toBe(1);
    h.accept(work([endpoint("ep_1")], [delivery("ep_1")]));
    expect(unread).toEqual(["ep_f", "ep_x", "ep_1"]);
  });

  it("announces work of shards it does not hold to their owner where signals are live, and reads it where not", () => {
    const theirs = "ep_theirs";
    const notMine = (s: number) => s !== shardOf(theirs);
    const live = setup({ mine: notMine, live: true });
    live.h.accept(work([endpoint(theirs)], [delivery(theirs)]));
    expect(live.announced).toEqual([[theirs]]);
    expect(live.unread).toEqual([]);
    const down = setup({ mine: notMine, live: false });
    down.h.accept(work([endpoint(theirs)], [delivery(theirs)]));
    expect(down.announced).toEqual([]);
    expect(down.unread).toEqual([theirs]);
  });

  it("an endpoint disabled meanwhile is read again; forgotten deliveries carry nothing", () => {
    const { h } = setup();
    const d1 = delivery("ep_1");
    const d2 = delivery("ep_2");
    h.accept(work([endpoint("ep_1"), endpoint("ep_2")], [d1, d2]));
    h.stale("ep_1");
    expect(h.claim(d1, 0)).toEqual({ delivery: d1 });
    h.forget([d2.id]);
    expect(h.claim(d2, 0)).toEqual({ delivery: d2 });
  });
});
