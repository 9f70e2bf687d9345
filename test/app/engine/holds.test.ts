import { describe, expect, it } from "vitest";
import { holds } from "../../../src/app/engine/holds.ts";
import type { Delivery } from "../../../src/domain/delivery.ts";
import { shardOf } from "../../../src/domain/shards.ts";

const delivery = (id: string, webhookId: string) => ({ id, webhookId }) as Delivery;

// Two endpoints known to fall in different shards, found rather than assumed.
const a = "ep_a";
const b = [..."bcdefghijklmnop"].map((c) => `ep_${c}`).find((id) => shardOf(id) !== shardOf(a))!;

describe("what the engine holds", () => {
  it("counts per endpoint and per shard, and forgets on release (once: a second release is ignored)", () => {
    const h = holds();
    h.hold(delivery("d1", a));
    h.hold(delivery("d2", a));
    h.hold(delivery("d3", b));
    expect(h.size).toBe(3);
    expect(h.ofEndpoint(a)).toBe(2);
    expect(h.holdsShard(shardOf(a))).toBe(true);
    expect(h.release(["d1", "d3", "unknown"])).toEqual([a, b]);
    expect(h.release(["d1"])).toEqual([]);
    expect(h.ofEndpoint(a)).toBe(1);
    expect(h.ofEndpoint(b)).toBe(0);
    expect(h.holdsShard(shardOf(b))).toBe(false);
    expect(h.has("d2")).toBe(true);
    expect([...h.entries()].map(([id, x]) => [id, x.webhookId])).toEqual([["d2", a]]);
  });

  it("a shard drains once its last held delivery is released, and not before", async () => {
    const h = holds();
    h.hold(delivery("d1", a));
    h.hold(delivery("d2", a));
    h.hold(delivery("d3", b));
    let drained = false;
    const waiting = h.drained(shardOf(a)).then(() => {
      drained = true;
    });
    h.release(["d1", "d3"]);
    await Promise.resolve();
    expect(drained).toBe(false);
    h.release(["d2"]);
    await waiting;
    expect(drained).toBe(true);
    // Nothing held of a shard: drained at once.
    await h.drained(shardOf(b));
  });
});
