import { describe, expect, it } from "vitest";
import type { AttemptResult, DueRequest } from "../../../src/app/ports/deliveries.ts";
import type { Repositories } from "../../../src/app/ports/store.ts";
import type { Delivery } from "../../../src/domain/delivery.ts";
import { shardOf } from "../../../src/domain/shards.ts";
import { aDelivery, at, ids, newScope, uuid } from "./fixtures.ts";

/** The result of a failed attempt, with an optional follow-up. */
function failed(d: Delivery, next: Delivery | null, over: Partial<AttemptResult> = {}): AttemptResult {
  return {
    id: d.id,
    status: "failed",
    responseStatus: 500,
    responseBody: "oops",
    error: "http_status",
    durationMs: 120,
    attemptedAt: at(50),
    nextAttemptAt: next?.scheduledAt ?? null,
    next,
    ...over,
  };
}

/** An endpoint id whose shard is not in `avoid`. */
function webhookOutside(avoid: ReadonlySet<number>): string {
  for (;;) {
    const id = uuid();
    if (!avoid.has(shardOf(id))) return id;
  }
}

/** The ports of ADR 9: due work read by shard, results in two writes, shard leases and heartbeats. */
export function claimingContract(store: () => Repositories): void {
  const due = (over: Partial<DueRequest> = {}) =>
    store().deliveries.due({
      now: at(0),
      shards: null,
      limit: 100,
      excludeWebhookIds: [],
      excludeIds: [],
      ...over,
    });

  describe("due", () => {
    it("answers due pending deliveries, earliest scheduled first, up to the limit, and writes nothing", async () => {
      const scope = newScope();
      const d1 = aDelivery(scope, { scheduledAt: at(-3000) });
      const d2 = aDelivery(scope, { scheduledAt: at(-2000) });
      const d3 = aDelivery(newScope(), { scheduledAt: at(0) });
      const future = aDelivery(scope, { scheduledAt: at(1) });
      const done = aDelivery(scope, { scheduledAt: at(-9000), status: "succeeded" });
      const cancelled = aDelivery(scope, { scheduledAt: at(-9000), status: "cancelled" });
      await store().deliveries.insertMany([d3, future, d2, done, d1, cancelled]);

      expect(await due({ limit: 2 })).toEqual([d1, d2]);
      // A read takes nothing: asked again, the same answer.
      expect(ids(await due())).toEqual([d1.id, d2.id, d3.id]);
      expect(await due({ limit: 0 })).toEqual([]);
      expect(ids(await due({ now: at(1) }))).toEqual([d1.id, d2.id, d3.id, future.id]);
    });

    it("reads only the shards asked for", async () => {
      const scope = newScope();
      const a = aDelivery(scope, { scheduledAt: at(-2) });
      const b = aDelivery(scope, {
        scheduledAt: at(-1),
        webhookId: webhookOutside(new Set([shardOf(a.webhookId)])),
      });
      await store().deliveries.insertMany([a, b]);
      expect(ids(await due({ shards: [shardOf(a.webhookId)] }))).toEqual([a.id]);
      expect(ids(await due({ shards: [shardOf(b.webhookId)] }))).toEqual([b.id]);
      expect(ids(await due({ shards: [shardOf(a.webhookId), shardOf(b.webhookId)] }))).toEqual([a.id, b.id]);
      expect(await due({ shards: [] })).toEqual([]);
    });

    it("leaves out endpoints at their cap and deliveries already held", async () => {
      const scope = newScope();
      const [w1, w2, w3] = [uuid(), uuid(), uuid()];
      const d1 = aDelivery(scope, { webhookId: w1, scheduledAt: at(-3) });
      const d2 = aDelivery(scope, { webhookId: w2, scheduledAt: at(-2) });
      const d3 = aDelivery(scope, { webhookId: w3, scheduledAt: at(-1) });
      const d4 = aDelivery(scope, { webhookId: w2, scheduledAt: at(0) });
      await store().deliveries.insertMany([d1, d2, d3, d4]);
      expect(ids(await due({ excludeWebhookIds: [w1, w3] }))).toEqual([d2.id, d4.id]);
      expect(ids(await due({ excludeIds: [d2.id, d3.id] }))).toEqual([d1.id, d4.id]);
      expect(ids(await due({ excludeWebhookIds: [w1], excludeIds: [d2.id] }))).toEqual([d3.id, d4.id]);
    });

    it("a dead endpoint's backlog does not hide other endpoints' work once it is excluded", async () => {
      const scope = newScope();
      const dead = uuid();
      const backlog = Array.from({ length: 30 }, (_, i) =>
        aDelivery(scope, { webhookId: dead, scheduledAt: at(-10_000 + i) }),
      );
      const healthy = aDelivery(scope, { scheduledAt: at(-1) });
      await store().deliveries.insertMany([...backlog, healthy]);
      expect(ids(await due({ limit: 5, excludeWebhookIds: [dead] }))).toEqual([healthy.id]);
    });
  });

  describe("postpone", () => {
    it("moves pending deliveries' time, and leaves finished ones and everything else as it was", async () => {
      const scope = newScope();
      const d1 = aDelivery(scope, { scheduledAt: at(-2) });
      const d2 = aDelivery(scope, { scheduledAt: at(-1) });
      const done = aDelivery(scope, { scheduledAt: at(-3), status: "cancelled" });
      await store().deliveries.insertMany([d1, d2, done]);
      await store().deliveries.postpone([d1.id, done.id, "dlv_missing"], at(5_000));
      expect(ids(await due())).toEqual([d2.id]);
      expect(ids(await due({ now: at(5_000) }))).toEqual([d2.id, d1.id]);
      expect(await store().deliveries.get(scope, d1.id)).toEqual({ ...d1, scheduledAt: at(5_000) });
      expect(await store().deliveries.get(scope, done.id)).toEqual(done);
      await store().deliveries.postpone([], at(9_000));
    });
  });

  describe("record", () => {
    it("finalises the record and inserts the next attempt, which becomes due on schedule", async () => {
      const scope = newScope();
      const d = aDelivery(scope, { scheduledAt: at(0) });
      await store().deliveries.insertMany([d]);
      const next = aDelivery(scope, {
        webhookId: d.webhookId,
        eventId: d.eventId,
        attempt: 2,
        scheduledAt: at(5000),
        createdAt: at(50),
      });
      await store().deliveries.record([failed(d, next)]);
      expect(await store().deliveries.get(scope, d.id)).toEqual({
        ...d,
        status: "failed",
        responseStatus: 500,
        responseBody: "oops",
        error: "http_status",
        durationMs: 120,
        attemptedAt: at(50),
        nextAttemptAt: at(5000),
      });
      expect(await store().deliveries.get(scope, next.id)).toEqual(next);
      expect(await due({ now: at(4999) })).toEqual([]);
      expect(ids(await due({ now: at(5000) }))).toEqual([next.id]);
      expect(ids(await due({ now: at(5000), shards: [shardOf(d.webhookId)] }))).toEqual([next.id]);
    });

    it("is harmless to repeat (a crash between its writes, or two owners across a lost lease): one next record, the first result stands", async () => {
      const scope = newScope();
      const d = aDelivery(scope);
      await store().deliveries.insertMany([d]);
      const next = aDelivery(scope, {
        webhookId: d.webhookId,
        eventId: d.eventId,
        attempt: 2,
        createdAt: at(1),
      });
      await store().deliveries.record([failed(d, next)]);
      await store().deliveries.record([failed(d, next)]);
      await store().deliveries.record([
        failed(d, null, { status: "succeeded", responseStatus: 200, error: null, nextAttemptAt: null }),
      ]);
      await store().deliveries.record([]);
      const got = await store().deliveries.get(scope, d.id);
      expect(got?.status).toBe("failed");
      expect(got?.responseStatus).toBe(500);
      const listed = await store().deliveries.list(scope, d.webhookId, {}, { limit: 10, cursor: null });
      expect(ids(listed.data).sort()).toEqual([d.id, next.id].sort());
      expect(await store().deliveries.get(scope, next.id)).toEqual(next);
    });

    it("records a batch: each record its own result, next records for all", async () => {
      const scope = newScope();
      const batch = [0, 1, 2].map((i) => aDelivery(scope, { scheduledAt: at(i) }));
      await store().deliveries.insertMany(batch);
      const nexts = batch.map((l) =>
        aDelivery(scope, { webhookId: l.webhookId, eventId: l.eventId, attempt: 2, scheduledAt: at(10_000) }),
      );
      await store().deliveries.record([
        failed(batch[0]!, nexts[0]!),
        failed(batch[1]!, nexts[1]!, { status: "skipped", responseStatus: null, error: null }),
        failed(batch[2]!, null, {
          status: "succeeded",
          responseStatus: 200,
          error: null,
          nextAttemptAt: null,
        }),
      ]);
      const got = await Promise.all(batch.map((d) => store().deliveries.get(scope, d.id)));
      expect(got.map((d) => d?.status)).toEqual(["failed", "skipped", "succeeded"]);
      expect(await store().deliveries.get(scope, nexts[0]!.id)).toEqual(nexts[0]);
      expect(await store().deliveries.get(scope, nexts[1]!.id)).toEqual(nexts[1]);
      expect(await due({ now: at(9_999) })).toEqual([]);
    });
  });

  describe("shard leases", () => {
    const lease = (shard: number, generation: number, owner: string, expiresAt = at(10_000)) => ({
      shard,
      generation,
      owner,
      expiresAt,
    });

    it("gives each (shard, generation) to exactly one of several concurrent takers", async () => {
      const takers = ["p1", "p2", "p3", "p4", "p5"];
      const won = await Promise.all(
        takers.map((owner) => store().shards.acquire([0, 1, 2, 3].map((s) => lease(s, 1, owner)))),
      );
      const all = won.flat().sort();
      expect(all).toEqual([0, 1, 2, 3]);
      const heads = await store().shards.heads();
      expect(heads.map((h) => h.shard).sort()).toEqual([0, 1, 2, 3]);
      for (const h of heads) {
        const winner = takers[won.findIndex((w) => w.includes(h.shard))];
        expect(h).toEqual(lease(h.shard, 1, winner!));
      }
    });

    it("answers the newest generation of each shard; a taken generation is refused", async () => {
      expect(await store().shards.heads()).toEqual([]);
      expect(await store().shards.acquire([lease(7, 1, "a", at(100))])).toEqual([7]);
      expect(await store().shards.acquire([lease(7, 1, "b")])).toEqual([]);
      expect(await store().shards.acquire([lease(7, 2, "b"), lease(8, 1, "b")])).toEqual([7, 8]);
      const heads = await store().shards.heads();
      expect(heads.sort((x, y) => x.shard - y.shard)).toEqual([lease(7, 2, "b"), lease(8, 1, "b")]);
      expect(await store().shards.acquire([lease(7, 2, "c")])).toEqual([]);
    });

    it("renews and gives back only the owner's own generation", async () => {
      await store().shards.acquire([lease(1, 1, "a", at(100)), lease(2, 1, "a", at(100))]);
      expect(await store().shards.renew("b", [{ shard: 1, generation: 1 }], at(999), at(0))).toEqual([]);
      expect(
        await store().shards.renew(
          "a",
          [
            { shard: 1, generation: 1 },
            { shard: 2, generation: 2 },
          ],
          at(500),
          at(0),
        ),
      ).toEqual([1]);
      const byShard = async () => new Map((await store().shards.heads()).map((h) => [h.shard, h]));
      expect((await byShard()).get(1)?.expiresAt).toEqual(at(500));
      expect((await byShard()).get(2)?.expiresAt).toEqual(at(100));
      await store().shards.release("b", [{ shard: 1, generation: 1 }]);
      expect((await byShard()).get(1)?.expiresAt).toEqual(at(500));
      await store().shards.release("a", [{ shard: 1, generation: 1 }]);
      expect((await byShard()).get(1)?.expiresAt).toEqual(new Date(0));
      expect(await store().shards.acquire([lease(1, 2, "b")])).toEqual([1]);
      expect((await byShard()).get(1)).toEqual(lease(1, 2, "b"));
    });

    it("does not renew a lease that has expired: another process may be taking the shard over", async () => {
      await store().shards.acquire([
        lease(1, 1, "a", at(100)),
        lease(2, 1, "a", at(300)),
        lease(3, 1, "a", new Date(0)),
      ]);
      const mine = [1, 2, 3].map((shard) => ({ shard, generation: 1 }));
      // At 100 the first has just expired; the third was given back (the epoch).
      expect(await store().shards.renew("a", mine, at(900), at(100))).toEqual([2]);
      const byShard = new Map((await store().shards.heads()).map((h) => [h.shard, h.expiresAt]));
      expect(byShard).toEqual(
        new Map([
          [1, at(100)],
          [2, at(900)],
          [3, new Date(0)],
        ]),
      );
      // Its next generation is free to take.
      expect(await store().shards.acquire([lease(1, 2, "b", at(1000))])).toEqual([1]);
    });

    it("knows the live processes by their heartbeats", async () => {
      // A "session" store counts a process live only while it holds its proof of life too.
      if (store().shards.liveness === "session") {
        expect(await store().shards.hold("a")).toBe(false);
        expect(await store().shards.hold("a")).toBe(true);
        await store().shards.hold("b");
      } else expect(await store().shards.hold("a")).toBe(true);
      await store().shards.beat("a", at(1000));
      await store().shards.beat("b", at(2000));
      expect((await store().shards.live(at(0))).sort()).toEqual(["a", "b"]);
      expect(await store().shards.live(at(1000))).toEqual(["b"]);
      await store().shards.beat("a", at(3000));
      expect((await store().shards.live(at(1000))).sort()).toEqual(["a", "b"]);
      await store().shards.leave("b");
      expect(await store().shards.live(at(0))).toEqual(["a"]);
      await store().shards.leave("a");
      expect(await store().shards.live(at(0))).toEqual([]);
    });
  });
}
