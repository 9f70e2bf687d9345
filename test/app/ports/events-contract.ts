import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../../src/app/ports/events.ts";
import type { Repositories } from "../../../src/app/ports/store.ts";
import { anEvent, at, ids, newScope, sortOldestFirst, uuid } from "./fixtures.ts";

export function eventContract(store: () => Repositories): void {
  describe("events", () => {
    const insertAll = async (items: StoredEvent[]) => {
      for (const e of items) expect(await store().events.insert(e)).toBe(true);
    };

    it("returns an inserted event exactly, and refuses a second one with the same id", async () => {
      const scope = newScope();
      const e = anEvent(scope, { targets: [uuid(), uuid()], occurredAt: at(-10), createdAt: at(3) });
      expect(await store().events.insert(e)).toBe(true);
      expect(await store().events.get(scope, e.id)).toEqual(e);
      expect(await store().events.insert({ ...e, body: "{}", targets: [] })).toBe(false);
      expect(await store().events.get(scope, e.id)).toEqual(e);
    });

    it("keeps the publish's traceparent with the event, for its attempts' spans (ADR 24)", async () => {
      const scope = newScope();
      const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
      const traced = anEvent(scope, { traceparent });
      const plain = anEvent(scope);
      await insertAll([traced, plain]);
      expect(await store().events.get(scope, traced.id)).toEqual(traced);
      expect((await store().events.getMany([traced.id, plain.id])).map((e) => e.traceparent)).toEqual([
        traceparent,
        null,
      ]);
      if (store().events.insertWithDeliveries) {
        const another = anEvent(scope, { traceparent });
        expect(await store().events.insertWithDeliveries!(another, [])).toBe(true);
        expect((await store().events.get(scope, another.id))?.traceparent).toBe(traceparent);
      }
    });

    it("hides an event from other tenants and projects; getMany is unscoped and ordered as asked", async () => {
      const scope = newScope();
      const a = anEvent(scope);
      const b = anEvent(newScope());
      await insertAll([a, b]);
      expect(await store().events.get({ tenantId: uuid(), projectId: scope.projectId }, a.id)).toBeNull();
      expect(await store().events.get({ tenantId: scope.tenantId, projectId: uuid() }, a.id)).toBeNull();
      expect(await store().events.getMany([b.id, "evt_missing", a.id])).toEqual([b, a]);
      expect(await store().events.getMany([])).toEqual([]);
    });

    it("lists events awaiting fan-out created at or before a moment, oldest first, until marked", async () => {
      const scope = newScope();
      const e1 = anEvent(scope, { createdAt: at(0) });
      const e2 = anEvent(newScope(), { createdAt: at(1000) });
      const e3 = anEvent(scope, { createdAt: at(2000) });
      const done = anEvent(scope, { createdAt: at(0), fanoutPending: false });
      await insertAll([e3, done, e2, e1]);

      expect(ids(await store().events.listFanoutPending(at(1000), 10))).toEqual([e1.id, e2.id]);
      expect(ids(await store().events.listFanoutPending(at(1000), 1))).toEqual([e1.id]);
      await store().events.markFannedOut([e1.id, "evt_missing"]);
      expect(ids(await store().events.listFanoutPending(at(5000), 10))).toEqual([e2.id, e3.id]);
      expect((await store().events.get(scope, e1.id))?.fanoutPending).toBe(false);
      await store().events.markFannedOut([]);
      expect(ids(await store().events.listFanoutPending(at(5000), 10))).toEqual([e2.id, e3.id]);
    });

    it("listCreatedBetween answers [since, until) of the project, oldest first, ties by id, paged by `after`", async () => {
      const scope = newScope();
      const before = anEvent(scope, { createdAt: at(999) });
      const tied = [1, 2, 3].map(() => anEvent(scope, { createdAt: at(1000) }));
      const middle = anEvent(scope, { createdAt: at(2000) });
      const atUntil = anEvent(scope, { createdAt: at(3000) });
      const foreign = [
        anEvent({ tenantId: uuid(), projectId: scope.projectId }, { createdAt: at(1500) }),
        anEvent({ tenantId: scope.tenantId, projectId: uuid() }, { createdAt: at(1500) }),
      ];
      await insertAll([atUntil, middle, ...tied, before, ...foreign]);
      const expected = ids(sortOldestFirst([...tied, middle]));

      expect(ids(await store().events.listCreatedBetween(scope, at(1000), at(3000), 10))).toEqual(expected);
      const first = await store().events.listCreatedBetween(scope, at(1000), at(3000), 2);
      expect(ids(first)).toEqual(expected.slice(0, 2));
      const second = await store().events.listCreatedBetween(scope, at(1000), at(3000), 2, first[1]?.id);
      expect(ids(second)).toEqual(expected.slice(2, 4));
      expect(await store().events.listCreatedBetween(scope, at(1000), at(3000), 2, second[1]?.id)).toEqual(
        [],
      );
      expect(await store().events.listCreatedBetween(scope, at(3001), at(4000), 10)).toEqual([]);
    });

    it("deleteCreatedBefore removes events created strictly before the moment and counts them", async () => {
      const scope = newScope();
      const old = anEvent(scope, { createdAt: at(0), fanoutPending: false });
      const edge = anEvent(scope, { createdAt: at(1000) });
      const young = anEvent(newScope(), { createdAt: at(2000) });
      await insertAll([old, edge, young]);
      expect(await store().events.deleteCreatedBefore(at(1000))).toBe(1);
      expect(ids(await store().events.getMany([old.id, edge.id, young.id]))).toEqual([edge.id, young.id]);
      expect(await store().events.deleteCreatedBefore(at(1000))).toBe(0);
    });
  });
}
