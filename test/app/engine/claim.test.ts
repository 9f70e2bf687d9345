import { describe, expect, it } from "vitest";
import { roomRule, takeWithinRoom } from "../../../src/app/engine/claim.ts";
import { dueQueue } from "../../../src/app/engine/queue.ts";
import type { Delivery } from "../../../src/domain/delivery.ts";

let n = 0;
const due = (webhookId: string) => ({ id: `d${++n}`, webhookId, scheduledAt: new Date(n) }) as Delivery;

describe("a round's take within its room", () => {
  it("starts FIFO heads first, then the queue's earliest, within the room and each endpoint's cap", () => {
    const queue = dueQueue({ depth: 10, maxAgeMs: 10_000 });
    const h1 = due("f1");
    const h2 = due("f2");
    const q1 = due("a");
    const q2 = due("a");
    const q3 = due("b");
    queue.add([q1, q2, q3], 0);
    const fits = roomRule(1, new Map(), new Map());
    const take = takeWithinRoom([{ delivery: h1 }, { delivery: h2 }], queue, 3, fits, 0, (delivery) => ({
      delivery,
      head: false,
    }));
    expect(take.claimed.map((c) => [c.delivery.id, c.head])).toEqual([
      [h1.id, true],
      [h2.id, true],
      [q1.id, false],
    ]);
    expect([...take.headIds]).toEqual([h1.id, h2.id]);
    expect(take.left).toEqual([]);
    expect(queue.size).toBe(2);
  });

  it("heads with no room are left (they stay pending); what waited too long comes back as expired", () => {
    const queue = dueQueue({ depth: 10, maxAgeMs: 100 });
    const old = due("a");
    queue.add([old], 0);
    const h1 = due("f1");
    const h2 = due("f2");
    const take = takeWithinRoom([{ delivery: h1 }, { delivery: h2 }], queue, 1, () => true, 1_000);
    expect(take.claimed.map((c) => c.delivery.id)).toEqual([h1.id]);
    expect(take.left).toEqual([h2.id]);
    expect(take.expired).toEqual([old.id]);
  });
});
