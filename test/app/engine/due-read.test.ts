import { describe, expect, it } from "vitest";
import { dueReader } from "../../../src/app/engine/due-read.ts";
import type { FifoHeads } from "../../../src/app/engine/fifo.ts";
import { holds } from "../../../src/app/engine/holds.ts";
import { dueQueue } from "../../../src/app/engine/queue.ts";
import { readDemand } from "../../../src/app/engine/read-demand.ts";
import type { Delivery } from "../../../src/domain/delivery.ts";

let n = 0;
const delivery = (webhookId: string) =>
  ({ id: `d${++n}`, webhookId, status: "pending", scheduledAt: new Date(n) }) as Delivery;

const noFifo = {
  refresh: async () => {},
  isFifo: () => false,
  excluded: () => [],
  heads: async (c: unknown[]) => c,
} as unknown as FifoHeads;

function setup(answer: () => Promise<Delivery[]>) {
  const queue = dueQueue({ depth: 10, maxAgeMs: 10_000 });
  const held = holds();
  const reader = dueReader(
    {
      deliveries: { due: answer },
      clock: { now: () => new Date(1_000) },
      queue,
      fifo: noFifo,
      holds: held,
      demand: readDemand(queue),
      pace: { rooms: () => new Map() },
      ownership: { claimable: () => null, mayClaim: () => true },
      release: (ids) => void held.release(ids),
      measured: () => {},
    },
    { queueSize: 100, queueDepth: 10 },
  );
  return { reader, queue, held };
}

describe("a due read", () => {
  it("queues and holds what it found", async () => {
    const d = delivery("ep_1");
    const { reader, queue, held } = setup(async () => [d]);
    await reader.read(10);
    expect(queue.size).toBe(1);
    expect(held.has(d.id)).toBe(true);
  });

  it("drops what was held when it landed", async () => {
    const d = delivery("ep_1");
    const { reader, queue, held } = setup(async () => [d]);
    held.hold(d);
    await reader.read(10);
    expect(queue.size).toBe(0);
  });

  it("never queues again what was sent, recorded and let go while it was on its way", async () => {
    // Taken (a hand-over) after the read started, so not left out of it by id; the read's snapshot is
    // older than its record, so the read still finds it pending.
    const d = delivery("ep_1");
    let answer!: (ds: Delivery[]) => void;
    let asked!: () => void;
    const sent = new Promise<void>((r) => (asked = r));
    const { reader, queue, held } = setup(
      () =>
        new Promise((r) => {
          answer = r;
          asked();
        }),
    );
    const reading = reader.read(10);
    await sent;
    held.hold(d);
    held.release([d.id]);
    answer([d]);
    await reading;
    expect(queue.size).toBe(0);
    expect(held.has(d.id)).toBe(false);
  });

  it("forgets what was let go before it started or after it landed", async () => {
    const [d1, d2] = [delivery("ep_1"), delivery("ep_1")];
    const { reader, queue, held } = setup(async () => [d1]);
    held.hold(d1);
    held.release([d1.id]);
    await reader.read(10);
    expect(queue.size).toBe(1);
    held.hold(d2);
    held.release([d2.id]);
    const again = setup(async () => [d2]);
    await again.reader.read(10);
    expect(again.queue.size).toBe(1);
  });
});
