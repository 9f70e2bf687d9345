import { describe, expect, it } from "vitest";
import type { AttemptResult, ClaimRequest, LeasedDelivery } from "../../src/app/ports/deliveries.ts";
import type { Repositories } from "../../src/app/ports/store.ts";
import type { Delivery } from "../../src/domain/delivery.ts";
import { aDelivery, at, ids, newScope, uuid } from "./fixtures.ts";

const strip = ({ leaseOwner: _o, leaseExpiresAt: _e, recovered: _r, ...d }: LeasedDelivery): Delivery => d;

/** The result of a failed attempt by the holder of `leased`, with an optional follow-up. */
function failed(
  leased: LeasedDelivery,
  next: Delivery | null,
  over: Partial<AttemptResult> = {},
): AttemptResult {
  return {
    id: leased.id,
    leaseOwner: leased.leaseOwner,
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

export function leasingContract(store: () => Repositories): void {
  const claim = (over: Partial<ClaimRequest> = {}) =>
    store().deliveries.claimDue({
      now: at(0),
      owner: "worker-a",
      leaseMs: 30_000,
      limit: 100,
      excludeWebhookIds: [],
      ...over,
    });

  describe("claimDue", () => {
    it("leases no more for an endpoint than the room its per-endpoint limit leaves", async () => {
      const scope = newScope();
      const busyHook = uuid();
      const quietHook = uuid();
      const backlog = Array.from({ length: 12 }, (_, i) =>
        aDelivery(scope, { webhookId: busyHook, scheduledAt: at(-10_000 + i) }),
      );
      const quiet = Array.from({ length: 3 }, (_, i) =>
        aDelivery(scope, { webhookId: quietHook, scheduledAt: at(-1_000 + i) }),
      );
      await store().deliveries.insertMany([...backlog, ...quiet]);

      // The busy endpoint already has 2 in flight in this process; its limit is 4: room for 2 more.
      const got = await claim({ limit: 10, perEndpointLimit: 4, busy: { [busyHook]: 2 } });
      expect(ids(got.filter((d) => d.webhookId === busyHook))).toEqual(ids(backlog.slice(0, 2)));
      expect(ids(got.filter((d) => d.webhookId === quietHook))).toEqual(ids(quiet));
      // Nothing was leased beyond that: the rest of the backlog is still claimable by others.
      const rest = await claim({ owner: "worker-b", limit: 100 });
      expect(ids(rest)).toEqual(ids(backlog.slice(2)));
    });

    it("leases due pending deliveries, earliest scheduled first, up to the limit", async () => {
      const scope = newScope();
      const d1 = aDelivery(scope, { scheduledAt: at(-3000) });
      const d2 = aDelivery(scope, { scheduledAt: at(-2000) });
      const d3 = aDelivery(newScope(), { scheduledAt: at(0) });
      const future = aDelivery(scope, { scheduledAt: at(1) });
      const done = aDelivery(scope, { scheduledAt: at(-9000), status: "succeeded" });
      const cancelled = aDelivery(scope, { scheduledAt: at(-9000), status: "cancelled" });
      await store().deliveries.insertMany([d3, future, d2, done, d1, cancelled]);

      const first = await claim({ limit: 2 });
      expect(first.map(strip)).toEqual([d1, d2]);
      for (const l of first) {
        expect(l.leaseExpiresAt).toEqual(at(30_000));
        expect(typeof l.leaseOwner).toBe("string");
        expect(l.leaseOwner.length).toBeGreaterThan(0);
      }
      expect(ids(await claim())).toEqual([d3.id]);
      expect(await claim()).toEqual([]);
      expect(await claim({ limit: 0, now: at(60_000) })).toEqual([]);
    });

    it("hands a leased delivery out again only once its lease has expired, under a new lease", async () => {
      const d = aDelivery(newScope(), { scheduledAt: at(0) });
      await store().deliveries.insertMany([d]);
      const [first] = await claim({ leaseMs: 30_000 });
      expect(first?.id).toBe(d.id);
      expect(await claim({ now: at(29_999), owner: "worker-b" })).toEqual([]);
      const again = await claim({ now: at(30_000), owner: "worker-b", leaseMs: 10_000 });
      expect(ids(again)).toEqual([d.id]);
      expect(again[0]?.leaseExpiresAt).toEqual(at(40_000));
      expect(again[0]?.leaseOwner).not.toBe(first?.leaseOwner);
      // Only the take-over of an expired lease counts as a recovery.
      expect(first?.recovered).toBe(false);
      expect(again[0]?.recovered).toBe(true);
    });

    it("does not count a claim of a released delivery as a recovery", async () => {
      const d = aDelivery(newScope(), { scheduledAt: at(0) });
      await store().deliveries.insertMany([d]);
      const [first] = await claim();
      await store().deliveries.release(first!.leaseOwner, [d.id]);
      const [again] = await claim({ owner: "worker-b" });
      expect(again?.id).toBe(d.id);
      expect(again?.recovered).toBe(false);
    });

    it("leaves out the endpoints it is told to exclude", async () => {
      const scope = newScope();
      const [w1, w2, w3] = [uuid(), uuid(), uuid()];
      const d1 = aDelivery(scope, { webhookId: w1 });
      const d2 = aDelivery(scope, { webhookId: w2, scheduledAt: at(-1) });
      const d3 = aDelivery(scope, { webhookId: w3 });
      await store().deliveries.insertMany([d1, d2, d3]);
      expect(ids(await claim({ excludeWebhookIds: [w1, w3] }))).toEqual([d2.id]);
      expect(ids(await claim({ excludeWebhookIds: [w3] }))).toEqual([d1.id]);
    });

    it("never hands one delivery to two concurrent claims", async () => {
      const scope = newScope();
      const all = Array.from({ length: 50 }, (_, i) =>
        aDelivery(scope, { webhookId: uuid(), scheduledAt: at(-1000 + (i % 7)) }),
      );
      await store().deliveries.insertMany(all);
      const owners = ["p1", "p2", "p3", "p1", "p2"];
      const batches = await Promise.all(owners.map((owner) => claim({ owner, limit: 20 })));
      const claimed = batches.flat();
      expect(claimed.length).toBeGreaterThanOrEqual(20);
      expect(new Set(ids(claimed)).size).toBe(claimed.length);
      const rest = await claim({ owner: "p9", limit: 100 });
      const union = [...ids(claimed), ...ids(rest)];
      expect(new Set(union).size).toBe(union.length);
      expect(union.sort()).toEqual(ids(all).sort());
    });
  });

  describe("complete", () => {
    it("finalises the leased record and inserts the next attempt, which becomes due on schedule", async () => {
      const scope = newScope();
      const d = aDelivery(scope, { scheduledAt: at(0) });
      await store().deliveries.insertMany([d]);
      const [leased] = await claim();
      const next = aDelivery(scope, {
        webhookId: d.webhookId,
        eventId: d.eventId,
        attempt: 2,
        scheduledAt: at(5000),
        createdAt: at(50),
      });
      await store().deliveries.complete([failed(leased!, next)]);

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
      expect(await claim({ now: at(4999) })).toEqual([]);
      expect(ids(await claim({ now: at(5000) }))).toEqual([next.id]);
    });

    it("is harmless to repeat: one next record, and the first result stands", async () => {
      const scope = newScope();
      const d = aDelivery(scope);
      await store().deliveries.insertMany([d]);
      const [leased] = await claim();
      const next = aDelivery(scope, {
        webhookId: d.webhookId,
        eventId: d.eventId,
        attempt: 2,
        createdAt: at(1),
      });
      await store().deliveries.complete([failed(leased!, next)]);
      await store().deliveries.complete([failed(leased!, next)]);
      await store().deliveries.complete([
        failed(leased!, null, { status: "succeeded", responseStatus: 200, error: null, nextAttemptAt: null }),
      ]);
      await store().deliveries.complete([]);

      const got = await store().deliveries.get(scope, d.id);
      expect(got?.status).toBe("failed");
      expect(got?.responseStatus).toBe(500);
      const listed = await store().deliveries.list(scope, d.webhookId, {}, { limit: 10, cursor: null });
      expect(ids(listed.data).sort()).toEqual([d.id, next.id].sort());
      expect(await store().deliveries.get(scope, next.id)).toEqual(next);
    });

    it("does not finalise a record whose lease was taken over, even by the same owner", async () => {
      const scope = newScope();
      const d = aDelivery(scope);
      await store().deliveries.insertMany([d]);
      const [stale] = await claim({ leaseMs: 1000 });
      const [current] = await claim({ now: at(1000), leaseMs: 30_000 });
      expect(current?.id).toBe(d.id);

      await store().deliveries.complete([failed(stale!, null)]);
      expect(await store().deliveries.get(scope, d.id)).toEqual(d);
      await store().deliveries.complete([failed(stale!, null, { leaseOwner: "someone-else" })]);
      expect(await store().deliveries.get(scope, d.id)).toEqual(d);

      await store().deliveries.complete([
        failed(current!, null, { status: "succeeded", responseStatus: 204, error: null, responseBody: "" }),
      ]);
      expect((await store().deliveries.get(scope, d.id))?.status).toBe("succeeded");
      expect((await store().deliveries.get(scope, d.id))?.responseStatus).toBe(204);
    });

    it("completes a batch: each record by its own lease, next records inserted for all", async () => {
      const scope = newScope();
      const batch = [0, 1, 2].map((i) => aDelivery(scope, { scheduledAt: at(i) }));
      await store().deliveries.insertMany(batch);
      const leased = await claim({ now: at(10) });
      expect(leased).toHaveLength(3);
      const nexts = leased.map((l) =>
        aDelivery(scope, { webhookId: l.webhookId, eventId: l.eventId, attempt: 2, scheduledAt: at(10_000) }),
      );
      await store().deliveries.complete([
        failed(leased[0]!, nexts[0]!),
        failed(leased[1]!, nexts[1]!, { leaseOwner: "not-the-holder" }),
        failed(leased[2]!, null, {
          status: "succeeded",
          responseStatus: 200,
          error: null,
          nextAttemptAt: null,
        }),
      ]);
      const [a, b, c] = await Promise.all(batch.map((d) => store().deliveries.get(scope, d.id)));
      expect([a?.status, b?.status, c?.status]).toEqual(["failed", "pending", "succeeded"]);
      expect(await store().deliveries.get(scope, nexts[0]!.id)).toEqual(nexts[0]);
      expect(await store().deliveries.get(scope, nexts[1]!.id)).toEqual(nexts[1]);
    });
  });

  describe("release", () => {
    it("gives deliveries back at once when asked by the claiming owner or by the lease's own token", async () => {
      const scope = newScope();
      const d1 = aDelivery(scope, { scheduledAt: at(-2) });
      const d2 = aDelivery(scope, { scheduledAt: at(-1) });
      await store().deliveries.insertMany([d1, d2]);
      const leased = await claim({ owner: "proc-a" });
      expect(ids(leased)).toEqual([d1.id, d2.id]);

      await store().deliveries.release("proc-a", [d1.id]);
      expect(ids(await claim({ owner: "proc-b" }))).toEqual([d1.id]);

      await store().deliveries.release(leased[1]!.leaseOwner, [d2.id]);
      expect(ids(await claim({ owner: "proc-c" }))).toEqual([d2.id]);
    });

    it("leaves leases of other owners and finished records alone", async () => {
      const scope = newScope();
      const d = aDelivery(scope);
      const other = aDelivery(scope, { scheduledAt: at(-1) });
      await store().deliveries.insertMany([d, other]);
      const [leasedOther, leased] = await claim({ owner: "proc-a" });
      expect(leased?.id).toBe(d.id);

      await store().deliveries.release("proc-b", [d.id]);
      await store().deliveries.release("proc", [d.id]);
      await store().deliveries.release("proc-a", []);
      expect(await claim({ owner: "proc-b" })).toEqual([]);

      await store().deliveries.complete([
        failed(leasedOther!, null, { status: "succeeded", responseStatus: 200, error: null }),
      ]);
      await store().deliveries.release("proc-a", [other.id, d.id]);
      expect((await store().deliveries.get(scope, other.id))?.status).toBe("succeeded");
      expect(ids(await claim({ owner: "proc-b" }))).toEqual([d.id]);
    });
  });
}
