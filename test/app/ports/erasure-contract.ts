import { describe, expect, it } from "vitest";
import type { ErasureRecord } from "../../../src/app/ports/erasures.ts";
import type { Scope } from "../../../src/app/ports/paging.ts";
import type { Repositories } from "../../../src/app/ports/store.ts";
import {
  aDelivery,
  allPages,
  anEvent,
  at,
  ids,
  newScope,
  sortedIds,
  sortNewestFirst,
  uuid,
} from "./fixtures.ts";

const anErasure = (scope: Scope, over: Partial<ErasureRecord> = {}): ErasureRecord => ({
  id: uuid(),
  tenantId: scope.tenantId,
  projectId: scope.projectId,
  subject: "resource_id",
  resourceId: uuid(),
  eventsErased: 2,
  deliveriesErased: 5,
  deliveriesCancelled: 1,
  createdAt: at(0),
  ...over,
});

/** What erasure and per-project retention need from a store (ADR 15). */
export function erasureContract(store: () => Repositories): void {
  describe("erasure: events by subject", () => {
    it("keeps an event's subject fields and finds its ids by resource id or recipient key, in its project only", async () => {
      const scope = newScope();
      const resourceId = uuid();
      const a = anEvent(scope, { resourceId, recipientKey: "k-ada" });
      const b = anEvent(scope, { resourceId, recipientKey: null });
      const c = anEvent(scope, { recipientKey: "k-ada" });
      const other = anEvent(scope, { recipientKey: "k-bob" });
      const foreign = anEvent(newScope(), { resourceId, recipientKey: "k-ada" });
      const sameTenant = anEvent({ tenantId: scope.tenantId, projectId: uuid() }, { resourceId });
      for (const e of [a, b, c, other, foreign, sameTenant]) await store().events.insert(e);

      expect(await store().events.get(scope, a.id)).toEqual(a);
      expect((await store().events.idsAbout(scope, { resourceId }, 10)).sort()).toEqual(sortedIds([a, b]));
      expect((await store().events.idsAbout(scope, { recipientKey: "k-ada" }, 10)).sort()).toEqual(
        sortedIds([a, c]),
      );
      expect(await store().events.idsAbout(scope, { recipientKey: "k-nobody" }, 10)).toEqual([]);
      expect(await store().events.idsAbout(scope, { resourceId }, 1)).toHaveLength(1);
      expect(await store().events.idsAbout(scope, { resourceId }, 0)).toEqual([]);
    });

    it("deletes events of the project by id and answers how many existed", async () => {
      const scope = newScope();
      const a = anEvent(scope);
      const b = anEvent(scope);
      const foreign = anEvent(newScope());
      for (const e of [a, b, foreign]) await store().events.insert(e);
      expect(await store().events.deleteMany(scope, [a.id, foreign.id, "evt_missing", a.id])).toBe(1);
      expect(await store().events.get(scope, a.id)).toBeNull();
      expect(await store().events.get(scope, b.id)).toEqual(b);
      expect(await store().events.getMany([foreign.id])).toEqual([foreign]);
      expect(await store().events.deleteMany(scope, [])).toBe(0);
      expect(await store().events.deleteMany(scope, [a.id])).toBe(0);
    });

    it("lists events stored without subject fields until the backfill writes them", async () => {
      const scope = newScope();
      const old = anEvent(scope, { resourceId: null, recipientKey: null });
      const older = anEvent(newScope(), { resourceId: null, recipientKey: null });
      const current = anEvent(scope);
      for (const e of [old, older, current]) await store().events.insert(e);
      expect(sortedIds(await store().events.listWithoutSubjects(10))).toEqual(sortedIds([old, older]));
      expect(await store().events.listWithoutSubjects(1)).toHaveLength(1);

      const resourceId = uuid();
      await store().events.setSubjects([
        { id: old.id, resourceId, recipientKey: "k-old" },
        { id: older.id, resourceId: uuid(), recipientKey: null },
        { id: "evt_missing", resourceId: uuid(), recipientKey: null },
      ]);
      expect(await store().events.listWithoutSubjects(10)).toEqual([]);
      expect(await store().events.get(scope, old.id)).toEqual({ ...old, resourceId, recipientKey: "k-old" });
      expect(await store().events.idsAbout(scope, { recipientKey: "k-old" }, 10)).toEqual([old.id]);
      await store().events.setSubjects([]);
    });

    it("deletes events created before a moment, of one project when a scope is given", async () => {
      const scope = newScope();
      const otherScope = newScope();
      const oldMine = anEvent(scope, { createdAt: at(0) });
      const newMine = anEvent(scope, { createdAt: at(2000) });
      const oldOther = anEvent(otherScope, { createdAt: at(0) });
      for (const e of [oldMine, newMine, oldOther]) await store().events.insert(e);
      expect(await store().events.deleteCreatedBefore(at(1000), scope)).toBe(1);
      expect(await store().events.get(scope, oldMine.id)).toBeNull();
      expect(await store().events.get(scope, newMine.id)).toEqual(newMine);
      expect(await store().events.get(otherScope, oldOther.id)).toEqual(oldOther);
      expect(await store().events.deleteCreatedBefore(at(1000))).toBe(1);
      expect(await store().events.get(otherScope, oldOther.id)).toBeNull();
    });
  });

  describe("erasure: delivery records", () => {
    const dueAll = (now: Date) =>
      store().deliveries.due({ now, shards: null, limit: 1000, excludeWebhookIds: [], excludeIds: [] });

    it("cancels pending records, strips every record's body, keeps outcomes, and marks each once", async () => {
      const scope = newScope();
      const eventId = `evt_${uuid().replaceAll("-", "")}`;
      const webhookId = uuid();
      const failed = aDelivery(scope, {
        eventId,
        webhookId,
        status: "failed",
        responseStatus: 500,
        responseBody: "ada@example.com was not found",
        error: "http_status",
        durationMs: 30,
        attemptedAt: at(10),
        nextAttemptAt: at(5000),
        createdAt: at(1),
      });
      const pending = aDelivery(scope, {
        eventId,
        webhookId,
        attempt: 2,
        scheduledAt: at(5000),
        createdAt: at(11),
      });
      const succeeded = aDelivery(scope, {
        eventId,
        status: "succeeded",
        responseStatus: 200,
        responseBody: "ok",
        durationMs: 5,
        attemptedAt: at(12),
        createdAt: at(2),
      });
      const otherEvent = aDelivery(scope, {
        webhookId,
        responseBody: "kept",
        status: "failed",
        createdAt: at(3),
      });
      const otherProject = aDelivery(newScope(), { eventId, status: "pending" });
      await store().deliveries.insertMany([failed, pending, succeeded, otherEvent, otherProject]);

      expect(await store().deliveries.erase(scope, [eventId, eventId], at(100))).toEqual({
        erased: 3,
        cancelled: 1,
      });
      expect(await store().deliveries.get(scope, failed.id)).toEqual({
        ...failed,
        responseBody: null,
        erasedAt: at(100),
      });
      expect(await store().deliveries.get(scope, pending.id)).toEqual({
        ...pending,
        status: "cancelled",
        erasedAt: at(100),
      });
      expect(await store().deliveries.get(scope, succeeded.id)).toEqual({
        ...succeeded,
        responseBody: null,
        erasedAt: at(100),
      });
      expect(await store().deliveries.get(scope, otherEvent.id)).toEqual(otherEvent);
      expect(await store().deliveries.get(newScope(), otherProject.id)).toBeNull();
      expect(ids(await dueAll(at(10_000)))).toEqual([otherProject.id]);

      // Repeating it changes nothing and counts nothing.
      expect(await store().deliveries.erase(scope, [eventId], at(200))).toEqual({ erased: 0, cancelled: 0 });
      expect((await store().deliveries.get(scope, failed.id))?.erasedAt).toEqual(at(100));
      expect(await store().deliveries.erase(scope, [], at(200))).toEqual({ erased: 0, cancelled: 0 });
    });

    it("a result recorded after the erasure does not bring a body back, nor a follow-up", async () => {
      const scope = newScope();
      const d = aDelivery(scope);
      await store().deliveries.insertMany([d]);
      await store().deliveries.erase(scope, [d.eventId], at(50));
      const next = aDelivery(scope, {
        eventId: d.eventId,
        webhookId: d.webhookId,
        attempt: 2,
        scheduledAt: at(60),
      });
      await store().deliveries.record([
        {
          id: d.id,
          status: "failed",
          responseStatus: 500,
          responseBody: "the receiver saw ada@example.com",
          error: "http_status",
          durationMs: 10,
          attemptedAt: at(55),
          nextAttemptAt: at(60),
          next,
        },
      ]);
      expect(await store().deliveries.get(scope, d.id)).toEqual({
        ...d,
        status: "cancelled",
        erasedAt: at(50),
      });
      // No follow-up of a record the erasure finished (before, one was written, for the engine to read its
      // event again and cancel it: ADR 15). A result only writes one with itself (deliveries-record-contract.ts).
      expect(await store().deliveries.get(scope, next.id)).toBeNull();
    });

    it("deletes finished records created before a moment, of one project when a scope is given", async () => {
      const scope = newScope();
      const otherScope = newScope();
      const oldDone = aDelivery(scope, { status: "succeeded", createdAt: at(0) });
      const oldPending = aDelivery(scope, { createdAt: at(0) });
      const newDone = aDelivery(scope, { status: "failed", createdAt: at(2000) });
      const otherOld = aDelivery(otherScope, { status: "succeeded", createdAt: at(0) });
      await store().deliveries.insertMany([oldDone, oldPending, newDone, otherOld]);
      expect(await store().deliveries.deleteCreatedBefore(at(1000), scope)).toBe(1);
      expect(await store().deliveries.get(scope, oldDone.id)).toBeNull();
      expect(await store().deliveries.get(scope, oldPending.id)).toEqual(oldPending);
      expect(await store().deliveries.get(scope, newDone.id)).toEqual(newDone);
      expect(await store().deliveries.get(otherScope, otherOld.id)).toEqual(otherOld);
      expect(await store().deliveries.deleteCreatedBefore(at(1000))).toBe(1);
      expect(await store().deliveries.get(otherScope, otherOld.id)).toBeNull();
    });
  });

  describe("erasure: idempotency keys", () => {
    it("deletes the keys that answer with the given events, and only those", async () => {
      const scope = newScope();
      const key = (k: string, eventId: string) => ({
        scopeKey: `${scope.tenantId}/${scope.projectId}/${k}`,
        eventId,
        fingerprint: "f",
        createdAt: at(0),
      });
      await store().idempotency.reserve(key("a", "evt_a"), at(-1));
      await store().idempotency.reserve(key("b", "evt_b"), at(-1));
      await store().idempotency.reserve(key("c", "evt_c"), at(-1));
      expect(await store().idempotency.deleteForEvents(["evt_a", "evt_c", "evt_missing"])).toBe(2);
      expect(await store().idempotency.deleteForEvents([])).toBe(0);
      // A new reservation of an erased event's key now holds the new record.
      const again = { ...key("a", "evt_new"), createdAt: at(1) };
      expect(await store().idempotency.reserve(again, at(-1))).toEqual(again);
      expect(
        await store().idempotency.reserve({ ...key("b", "evt_other"), createdAt: at(1) }, at(-1)),
      ).toEqual(key("b", "evt_b"));
    });
  });

  describe("erasure records and project settings", () => {
    it("keeps erasure records per project, newest first, and deletes old ones (of one project when given)", async () => {
      const scope = newScope();
      const mine = [0, 500, 500, 900].map((t) => anErasure(scope, { createdAt: at(t) }));
      const byRecipient = anErasure(scope, { subject: "recipient", resourceId: null, createdAt: at(700) });
      const foreign = anErasure(newScope(), { createdAt: at(0) });
      for (const r of [...mine, byRecipient, foreign]) await store().erasures.insert(r);
      await store().erasures.insert(mine[0]!);

      expect(await store().erasures.get(scope, byRecipient.id)).toEqual(byRecipient);
      expect(await store().erasures.get(scope, foreign.id)).toBeNull();
      const { pages } = await allPages(2, (p) => store().erasures.list(scope, p));
      expect(pages.flat().map((r) => r.id)).toEqual(ids(sortNewestFirst([...mine, byRecipient])));

      expect(await store().erasures.deleteCreatedBefore(at(100), scope)).toBe(1);
      expect(await store().erasures.get(scope, mine[0]!.id)).toBeNull();
      expect(
        await store().erasures.get({ tenantId: foreign.tenantId, projectId: foreign.projectId }, foreign.id),
      ).toEqual(foreign);
      expect(await store().erasures.deleteCreatedBefore(at(600))).toBe(3);
    });

    it("stores one settings record per project and lists those with a retention of their own", async () => {
      const a = newScope();
      const b = newScope();
      expect(await store().settings.get(a)).toBeNull();
      await store().settings.put({ ...a, retentionMs: 86_400_000, updatedAt: at(1) });
      await store().settings.put({ ...b, retentionMs: null, updatedAt: at(2) });
      expect(await store().settings.get(a)).toEqual({ ...a, retentionMs: 86_400_000, updatedAt: at(1) });
      expect(await store().settings.withRetention()).toEqual([
        { ...a, retentionMs: 86_400_000, updatedAt: at(1) },
      ]);
      await store().settings.put({ ...a, retentionMs: null, updatedAt: at(3) });
      await store().settings.put({ ...b, retentionMs: 3_600_000, updatedAt: at(4) });
      expect(await store().settings.get(a)).toEqual({ ...a, retentionMs: null, updatedAt: at(3) });
      expect(await store().settings.withRetention()).toEqual([
        { ...b, retentionMs: 3_600_000, updatedAt: at(4) },
      ]);
    });
  });
}
