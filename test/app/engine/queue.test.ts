import { describe, expect, it } from "vitest";
import { pickWithinRoom, roomRule } from "../../../src/app/engine/claim.ts";
import { dueQueue } from "../../../src/app/engine/queue.ts";
import type { Delivery } from "../../../src/domain/delivery.ts";

let n = 0;
function due(webhookId: string, scheduledAtMs: number): Delivery {
  n++;
  return {
    id: `dlv_${n}`,
    eventId: `evt_${n}`,
    webhookId,
    scheduledAt: new Date(scheduledAtMs),
  } as Delivery;
}

const any = () => true;

describe("the owner's queue of due work", () => {
  it("takes across endpoints in due order, each only while the room rule allows", () => {
    const q = dueQueue({ depth: 10, maxAgeMs: 10_000 });
    q.add([due("a", 1), due("b", 2), due("a", 3), due("a", 4), due("b", 5)], 0);
    expect(q.size).toBe(5);
    // a has 1 in flight and a cap of 2: one more of a; b is free.
    const mayTake = roomRule(2, new Map([["a", 1]]));
    const { taken, expired } = q.take(10, mayTake, 0);
    expect(taken.map((d) => [d.webhookId, d.scheduledAt.getTime()])).toEqual([
      ["a", 1],
      ["b", 2],
      ["b", 5],
    ]);
    expect(expired).toEqual([]);
    expect(q.size).toBe(2);
    // What was left keeps its order for the next round.
    expect(q.take(10, any, 0).taken.map((d) => d.scheduledAt.getTime())).toEqual([3, 4]);
    expect(q.size).toBe(0);
  });

  it("takes no more than the limit, earliest first", () => {
    const q = dueQueue({ depth: 10, maxAgeMs: 10_000 });
    q.add([due("a", 5), due("b", 1), due("c", 3)], 0);
    expect(q.take(2, any, 0).taken.map((d) => d.webhookId)).toEqual(["b", "c"]);
  });

  it("keeps at most depth per endpoint; an endpoint cut short asks for a read once its lane runs low", () => {
    const q = dueQueue({ depth: 4, maxAgeMs: 10_000 });
    const kept = q.add(
      [1, 2, 3, 4, 5, 6].map((t) => due("a", t)),
      0,
    );
    expect(kept.map((d) => d.scheduledAt.getTime())).toEqual([1, 2, 3, 4]);
    expect(q.full()).toEqual(["a"]);
    expect(q.runningLow()).toBe(false);
    q.take(2, any, 0);
    // Two left of four: low, and the read that left two unread must be repeated.
    expect(q.full()).toEqual(["a"]);
    q.take(1, any, 0);
    expect(q.full()).toEqual([]);
    expect(q.runningLow()).toBe(true);
    // A read that includes the endpoint settles it; one that leaves it out does not.
    q.reading(new Set(["a"]));
    expect(q.runningLow()).toBe(true);
    q.reading(new Set());
    expect(q.runningLow()).toBe(false);
  });

  it("a lane filled exactly to its depth may have left work unread", () => {
    const q = dueQueue({ depth: 3, maxAgeMs: 10_000 });
    q.add([due("a", 1), due("a", 2), due("a", 3)], 0);
    q.take(3, any, 0);
    expect(q.runningLow()).toBe(true);
    const r = dueQueue({ depth: 3, maxAgeMs: 10_000 });
    r.add([due("a", 1), due("a", 2)], 0);
    r.take(2, any, 0);
    expect(r.runningLow()).toBe(false);
  });

  it("lets go of what waited longer than maxAgeMs, unsent, so it is read again", () => {
    const q = dueQueue({ depth: 10, maxAgeMs: 1_000 });
    q.add([due("a", 1), due("a", 2)], 0);
    q.add([due("a", 3)], 900);
    const { taken, expired } = q.take(10, any, 1_500);
    expect(expired.map((d) => d.scheduledAt.getTime())).toEqual([1, 2]);
    expect(taken.map((d) => d.scheduledAt.getTime())).toEqual([3]);
    expect(q.size).toBe(0);
  });

  it("drops what a shard given away holds, and only that", () => {
    const q = dueQueue({ depth: 10, maxAgeMs: 10_000 });
    q.add([due("a", 1), due("b", 2), due("a", 3)], 0);
    expect(q.drop((id) => id === "a").map((d) => d.scheduledAt.getTime())).toEqual([1, 3]);
    expect(q.size).toBe(1);
    expect(q.take(10, any, 0).taken.map((d) => d.webhookId)).toEqual(["b"]);
  });
});

describe("the room rule", () => {
  it("holds each endpoint under its cap less what is in flight, and under its rate limit's turns", () => {
    const list = [due("a", 1), due("a", 2), due("a", 3), due("b", 4), due("b", 5), due("c", 6)];
    const mayTake = roomRule(2, new Map([["a", 1]]), new Map([["b", 1]]));
    expect(pickWithinRoom(list, 10, mayTake).map((d) => d.scheduledAt.getTime())).toEqual([1, 4, 6]);
    expect(pickWithinRoom(list, 2, mayTake).map((d) => d.scheduledAt.getTime())).toEqual([1, 4]);
  });
});
