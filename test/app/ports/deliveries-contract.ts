import { describe, expect, it } from "vitest";
import type { AttemptResult } from "../../../src/app/ports/deliveries.ts";
import type { Repositories } from "../../../src/app/ports/store.ts";
import type { Delivery } from "../../../src/domain/delivery.ts";
import { recordFollowUpContract } from "./deliveries-record-contract.ts";
import { aDelivery, allPages, at, ids, newScope, sortedIds, sortNewestFirst, uuid } from "./fixtures.ts";

export function deliveryContract(store: () => Repositories): void {
  describe("deliveries", () => {
    const dueAll = (now: Date) =>
      store().deliveries.due({ now, shards: null, limit: 1000, excludeWebhookIds: [], excludeIds: [] });

    it("returns inserted deliveries exactly, inside their scope only", async () => {
      const scope = newScope();
      const pending = aDelivery(scope);
      const done = aDelivery(scope, {
        attempt: 3,
        trigger: "manual",
        status: "failed",
        responseStatus: 503,
        responseBody: "busy",
        error: "http_status",
        durationMs: 42,
        scheduledAt: at(10),
        attemptedAt: at(11),
        nextAttemptAt: at(5000),
        createdAt: at(9),
      });
      await store().deliveries.insertMany([pending, done]);
      expect(await store().deliveries.get(scope, pending.id)).toEqual(pending);
      expect(await store().deliveries.get(scope, done.id)).toEqual(done);
      expect(
        await store().deliveries.get({ tenantId: uuid(), projectId: scope.projectId }, done.id),
      ).toBeNull();
      expect(
        await store().deliveries.get({ tenantId: scope.tenantId, projectId: uuid() }, done.id),
      ).toBeNull();
      expect(await store().deliveries.get(scope, uuid())).toBeNull();
    });

    it("insertMany leaves existing records as they are and still inserts the new ones", async () => {
      const scope = newScope();
      const webhookId = uuid();
      const d1 = aDelivery(scope, { webhookId, createdAt: at(1) });
      const d2 = aDelivery(scope, { webhookId, createdAt: at(2) });
      await store().deliveries.insertMany([d1, d2]);
      const d3 = aDelivery(scope, { webhookId, createdAt: at(3) });
      await store().deliveries.insertMany([
        { ...d1, status: "succeeded", url: "https://changed.example/" },
        d3,
        {
          ...d2,
          attempt: 9,
        },
      ]);
      await store().deliveries.insertMany([d3, d3]);
      await store().deliveries.insertMany([]);
      expect(await store().deliveries.get(scope, d1.id)).toEqual(d1);
      expect(await store().deliveries.get(scope, d2.id)).toEqual(d2);
      expect(await store().deliveries.get(scope, d3.id)).toEqual(d3);
      const listed = await store().deliveries.list(scope, webhookId, {}, { limit: 10, cursor: null });
      expect(ids(listed.data)).toEqual([d3.id, d2.id, d1.id]);
    });

    it("lists one endpoint's deliveries in the scope newest first, across pages with equal timestamps", async () => {
      const scope = newScope();
      const webhookId = uuid();
      const mine = [
        ...[1, 2, 3, 4].map(() => aDelivery(scope, { webhookId, createdAt: at(500) })),
        aDelivery(scope, { webhookId, createdAt: at(900) }),
        aDelivery(scope, { webhookId, createdAt: at(100) }),
        aDelivery(scope, { webhookId, createdAt: at(100), status: "succeeded" }),
      ];
      const others = [
        aDelivery(scope, { createdAt: at(500) }),
        aDelivery({ tenantId: uuid(), projectId: scope.projectId }, { webhookId, createdAt: at(500) }),
        aDelivery({ tenantId: scope.tenantId, projectId: uuid() }, { webhookId, createdAt: at(500) }),
      ];
      await store().deliveries.insertMany([...others, ...mine]);
      const expected = ids(sortNewestFirst(mine));

      const { pages, cursors } = await allPages(2, (p) => store().deliveries.list(scope, webhookId, {}, p));
      expect(pages.map((p) => p.length)).toEqual([2, 2, 2, 1]);
      expect(pages.flat().map((d) => d.id)).toEqual(expected);
      expect(cursors[1]).toEqual({ createdAt: at(500), id: expected[3] });
      expect(cursors[3]).toBeNull();
      expect((await store().deliveries.list(scope, uuid(), {}, { limit: 5, cursor: null })).data).toEqual([]);
    });

    it("filters the list by status, event type, event id and [since, until), also while paging", async () => {
      const scope = newScope();
      const webhookId = uuid();
      const eventId = "evt_filter";
      const d = (createdAt: number, over: Partial<Delivery> = {}) =>
        aDelivery(scope, { webhookId, createdAt: at(createdAt), ...over });
      const a = d(0, { status: "succeeded", eventType: "message.sent" });
      const b = d(1000, { eventId });
      const c = d(1000, { eventId, attempt: 2, status: "failed" });
      const e = d(2000, { eventType: "message.sent" });
      const f = d(3000);
      await store().deliveries.insertMany([a, b, c, e, f]);
      const list = async (filter: Parameters<Repositories["deliveries"]["list"]>[2]) =>
        ids((await store().deliveries.list(scope, webhookId, filter, { limit: 10, cursor: null })).data);

      expect(await list({ status: "pending" })).toEqual(ids(sortNewestFirst([b, e, f])));
      expect(await list({ status: "failed" })).toEqual([c.id]);
      expect(await list({ eventType: "message.sent" })).toEqual([e.id, a.id]);
      expect(await list({ eventId })).toEqual(ids(sortNewestFirst([b, c])));
      expect(await list({ since: at(1000) })).toEqual(ids(sortNewestFirst([b, c, e, f])));
      expect(await list({ until: at(2000) })).toEqual(ids(sortNewestFirst([a, b, c])));
      expect(await list({ since: at(1000), until: at(3000), status: "pending" })).toEqual(
        ids(sortNewestFirst([b, e])),
      );

      const window = { since: at(1000), until: at(3000) };
      const { pages } = await allPages(1, (p) => store().deliveries.list(scope, webhookId, window, p));
      expect(pages.flat().map((x) => x.id)).toEqual(ids(sortNewestFirst([b, c, e])));
    });

    it("maxAttempts answers the highest attempt per asked (event, endpoint) pair, 0 when none", async () => {
      const scope = newScope();
      const [e1, e2, w1, w2] = ["evt_1", "evt_2", uuid(), uuid()] as const;
      await store().deliveries.insertMany([
        aDelivery(scope, { eventId: e1, webhookId: w1, attempt: 1, status: "failed" }),
        aDelivery(scope, { eventId: e1, webhookId: w1, attempt: 3 }),
        aDelivery(scope, { eventId: e1, webhookId: w1, attempt: 2, status: "failed" }),
        aDelivery(scope, { eventId: e1, webhookId: w2, attempt: 1 }),
        aDelivery(scope, { eventId: e2, webhookId: w1, attempt: 5 }),
      ]);
      const got = await store().deliveries.maxAttempts([
        { eventId: e1, webhookId: w1 },
        { eventId: e1, webhookId: w2 },
        { eventId: e2, webhookId: w2 },
      ]);
      expect(Object.fromEntries(got)).toEqual({ [`${e1}/${w1}`]: 3, [`${e1}/${w2}`]: 1, [`${e2}/${w2}`]: 0 });
      expect((await store().deliveries.maxAttempts([])).size).toBe(0);
    });

    it("latestForEvents answers each event's highest attempt to the endpoint, leaving out events with none", async () => {
      const scope = newScope();
      const [w1, w2] = [uuid(), uuid()];
      const first = aDelivery(scope, { eventId: "evt_a", webhookId: w1, attempt: 1, status: "failed" });
      const second = aDelivery(scope, { eventId: "evt_a", webhookId: w1, attempt: 2, createdAt: at(10) });
      const onlyOne = aDelivery(scope, { eventId: "evt_b", webhookId: w1, status: "succeeded" });
      const otherEndpoint = aDelivery(scope, { eventId: "evt_a", webhookId: w2, attempt: 7 });
      const notAsked = aDelivery(scope, { eventId: "evt_d", webhookId: w1 });
      await store().deliveries.insertMany([second, otherEndpoint, first, onlyOne, notAsked]);

      const latest = await store().deliveries.latestForEvents(w1, ["evt_a", "evt_b", "evt_c"]);
      expect(Object.fromEntries(latest)).toEqual({ evt_a: second, evt_b: onlyOne });
      expect((await store().deliveries.latestForEvents(w1, [])).size).toBe(0);
      expect((await store().deliveries.latestForEvents(uuid(), ["evt_a"])).size).toBe(0);
    });

    it("cancelPending cancels only that endpoint's pending deliveries, leased or not, and counts them", async () => {
      const scope = newScope();
      const webhookId = uuid();
      const leased = aDelivery(scope, { webhookId, scheduledAt: at(0) });
      const waiting = aDelivery(scope, { webhookId, scheduledAt: at(60_000), nextAttemptAt: null });
      const done = aDelivery(scope, {
        webhookId,
        status: "succeeded",
        responseStatus: 200,
        attemptedAt: at(1),
      });
      const elsewhere = aDelivery(scope, { scheduledAt: at(0) });
      await store().deliveries.insertMany([leased, waiting, done, elsewhere]);
      const otherScope = newScope();
      expect(await store().deliveries.cancelPending(otherScope, webhookId)).toBe(0);
      expect(await store().deliveries.cancelPending(scope, webhookId)).toBe(2);
      expect(await store().deliveries.get(scope, leased.id)).toEqual({ ...leased, status: "cancelled" });
      expect(await store().deliveries.get(scope, waiting.id)).toEqual({ ...waiting, status: "cancelled" });
      expect(await store().deliveries.get(scope, done.id)).toEqual(done);
      expect((await store().deliveries.get(scope, elsewhere.id))?.status).toBe("pending");
      expect(await store().deliveries.cancelPending(scope, webhookId)).toBe(0);

      // A process that sent it before the cancellation records late: the cancellation stands.
      await store().deliveries.record([
        {
          id: leased.id,
          status: "succeeded",
          responseStatus: 200,
          responseBody: "ok",
          error: null,
          durationMs: 5,
          attemptedAt: at(10),
          nextAttemptAt: null,
          next: null,
        },
      ]);
      expect((await store().deliveries.get(scope, leased.id))?.status).toBe("cancelled");
      expect(ids(await dueAll(at(120_000)))).toEqual([elsewhere.id]);
    });

    recordFollowUpContract(store);

    it("record stores the attempt's signature scheme and custom header names, null when not given", async () => {
      const scope = newScope();
      const sent = aDelivery(scope, { scheduledAt: at(0) });
      const older = aDelivery(scope, { scheduledAt: at(0) });
      const bare = aDelivery(scope, { scheduledAt: at(0) });
      await store().deliveries.insertMany([sent, older, bare]);
      const outcome = {
        status: "succeeded" as const,
        responseStatus: 200,
        responseBody: "ok",
        error: null,
        durationMs: 5,
        attemptedAt: at(10),
        nextAttemptAt: null,
        next: null,
      };
      await store().deliveries.record([
        {
          ...outcome,
          id: sent.id,
          signatureScheme: "standard-webhooks",
          headerNames: ["X-Tenant", "Authorization"],
        },
        // No headers sent: an empty list, which is not "unknown".
        { ...outcome, id: bare.id, signatureScheme: "herald-v1", headerNames: [] },
        // A result that does not say (a record finished without a send, or a writer from before).
        { ...outcome, id: older.id },
      ]);
      const got = await store().deliveries.get(scope, sent.id);
      expect(got?.signatureScheme).toBe("standard-webhooks");
      expect(got?.headerNames).toEqual(["X-Tenant", "Authorization"]);
      const none = await store().deliveries.get(scope, bare.id);
      expect(none?.signatureScheme).toBe("herald-v1");
      expect(none?.headerNames).toEqual([]);
      const unknown = await store().deliveries.get(scope, older.id);
      expect(unknown?.signatureScheme).toBeNull();
      expect(unknown?.headerNames).toBeNull();
      // A pending record has none yet, and the list reads them as get does.
      const page = await store().deliveries.list(scope, sent.webhookId, {}, { limit: 10, cursor: null });
      expect(page.data.map((d) => [d.signatureScheme, d.headerNames])).toEqual([
        ["standard-webhooks", ["X-Tenant", "Authorization"]],
      ]);
    });

    it("head answers an endpoint's earliest pending delivery in acceptance order, due or not; countPending counts", async () => {
      const scope = newScope();
      const webhookId = uuid();
      const mine = (over: Partial<Delivery>) => aDelivery(scope, { webhookId, ...over });
      // Accepted first, but its retry is scheduled last: still the head.
      const retry = mine({ sequence: 1_000, eventId: "evt_b", attempt: 2, scheduledAt: at(60_000) });
      const failed = mine({ sequence: 1_000, eventId: "evt_b", status: "failed", scheduledAt: at(0) });
      const tie = mine({ sequence: 1_000, eventId: "evt_c", scheduledAt: at(0) });
      const later = mine({ sequence: 2_000, eventId: "evt_a", scheduledAt: at(0) });
      const done = mine({ sequence: 500, eventId: "evt_0", status: "succeeded" });
      const other = aDelivery(scope, { sequence: 1, eventId: "evt_x" });
      await store().deliveries.insertMany([later, tie, retry, failed, done, other]);
      expect((await store().deliveries.head(webhookId))?.id).toBe(retry.id);
      expect(await store().deliveries.head(webhookId)).toEqual(retry);
      const nobody = uuid();
      expect(await store().deliveries.countPending([webhookId, other.webhookId, nobody])).toEqual(
        new Map([
          [webhookId, 3],
          [other.webhookId, 1],
          [nobody, 0],
        ]),
      );
      await store().deliveries.record([
        {
          id: retry.id,
          status: "succeeded",
          responseStatus: 200,
          responseBody: null,
          error: null,
          durationMs: 1,
          attemptedAt: at(60_001),
          nextAttemptAt: null,
          next: null,
        },
      ]);
      // Equal sequences (two processes in one millisecond): by event id.
      expect((await store().deliveries.head(webhookId))?.id).toBe(tie.id);
      expect(await store().deliveries.head(uuid())).toBeNull();
    });

    it("dueStats counts pending deliveries only, held ones included", async () => {
      expect(await store().deliveries.dueStats(at(0))).toEqual({ count: 0, oldestScheduledAt: null });
      const scope = newScope();
      const oldest = aDelivery(scope, { scheduledAt: at(0) });
      const due = aDelivery(newScope(), { scheduledAt: at(1000) });
      const future = aDelivery(scope, { scheduledAt: at(5000) });
      const finished = aDelivery(scope, { scheduledAt: at(-1000), status: "succeeded" });
      const cancelled = aDelivery(scope, { scheduledAt: at(-2000), status: "cancelled" });
      await store().deliveries.insertMany([future, due, finished, oldest, cancelled]);
      expect(ids(await dueAll(at(1000)))).toEqual([oldest.id, due.id]);

      expect(await store().deliveries.dueStats(at(1000))).toEqual({ count: 2, oldestScheduledAt: at(0) });
      expect(await store().deliveries.dueStats(at(999))).toEqual({ count: 1, oldestScheduledAt: at(0) });
      expect(await store().deliveries.dueStats(at(-1))).toEqual({ count: 0, oldestScheduledAt: null });
      expect(await store().deliveries.dueStats(at(10_000))).toEqual({ count: 3, oldestScheduledAt: at(0) });
      await store().deliveries.cancelPending(scope, oldest.webhookId);
      expect(await store().deliveries.dueStats(at(1000))).toEqual({ count: 1, oldestScheduledAt: at(1000) });
    });

    it("deleteCreatedBefore removes only finished deliveries created strictly before the moment", async () => {
      const scope = newScope();
      const webhookId = uuid();
      const d = (createdAt: number, status: Delivery["status"]) =>
        aDelivery(scope, { webhookId, createdAt: at(createdAt), status });
      const oldPending = d(0, "pending");
      const oldDone = [d(0, "succeeded"), d(10, "failed"), d(20, "skipped"), d(30, "cancelled")];
      const edge = d(1000, "failed");
      const young = d(2000, "succeeded");
      await store().deliveries.insertMany([oldPending, ...oldDone, edge, young]);

      expect(await store().deliveries.deleteCreatedBefore(at(1000))).toBe(4);
      const left = await store().deliveries.list(scope, webhookId, {}, { limit: 10, cursor: null });
      expect(sortedIds(left.data)).toEqual([oldPending.id, edge.id, young.id].sort());
      expect(await store().deliveries.deleteCreatedBefore(at(1000))).toBe(0);
    });

    describe("a success that acknowledges its pair (ADR 19)", () => {
      const succeeded = (d: Delivery, over: Partial<AttemptResult> = {}): AttemptResult => ({
        id: d.id,
        status: "succeeded",
        responseStatus: 200,
        responseBody: "ok",
        error: null,
        durationMs: 12,
        attemptedAt: at(60),
        nextAttemptAt: null,
        next: null,
        acknowledges: { eventId: d.eventId, webhookId: d.webhookId },
        ...over,
      });
      const failed = (d: Delivery, over: Partial<AttemptResult> = {}): AttemptResult => ({
        id: d.id,
        status: "failed",
        responseStatus: 500,
        responseBody: "oops",
        error: "http_status",
        durationMs: 30,
        attemptedAt: at(50),
        nextAttemptAt: null,
        next: null,
        ...over,
      });

      it("cancels the pair's pending automatic attempts as superseded; manual ones, other pairs and finished records stay", async () => {
        const scope = newScope();
        const webhookId = uuid();
        const eventId = `evt_${uuid().replaceAll("-", "")}`;
        const pair = { webhookId, eventId };
        const first = aDelivery(scope, {
          ...pair,
          status: "failed",
          error: "http_status",
          responseStatus: 500,
        });
        const automatic = aDelivery(scope, { ...pair, attempt: 2, scheduledAt: at(5000) });
        const manual = aDelivery(scope, { ...pair, attempt: 3, trigger: "manual" });
        const otherManual = aDelivery(scope, { ...pair, attempt: 4, trigger: "manual" });
        const otherEvent = aDelivery(scope, { webhookId, scheduledAt: at(5000) });
        const otherEndpoint = aDelivery(scope, { eventId, scheduledAt: at(5000) });
        // In the same batch, another pair's failure with its follow-up: both are written beside the cancel.
        const elsewhere = aDelivery(scope, { webhookId });
        const followUp = aDelivery(scope, {
          webhookId,
          eventId: elsewhere.eventId,
          attempt: 2,
          scheduledAt: at(7000),
        });
        await store().deliveries.insertMany([
          first,
          automatic,
          manual,
          otherManual,
          otherEvent,
          otherEndpoint,
          elsewhere,
        ]);

        await store().deliveries.record([
          failed(elsewhere, { next: followUp, nextAttemptAt: followUp.scheduledAt }),
          succeeded(manual),
        ]);
        expect(await store().deliveries.get(scope, elsewhere.id)).toMatchObject({ status: "failed" });
        expect(await store().deliveries.get(scope, followUp.id)).toEqual(followUp);

        const get = (d: Delivery) => store().deliveries.get(scope, d.id);
        expect(await get(automatic)).toEqual({ ...automatic, status: "cancelled", error: "superseded" });
        expect(await get(manual)).toMatchObject({ status: "succeeded", responseStatus: 200, error: null });
        expect(await get(otherManual)).toEqual(otherManual);
        expect(await get(first)).toEqual(first);
        expect(await get(otherEvent)).toEqual(otherEvent);
        expect(await get(otherEndpoint)).toEqual(otherEndpoint);
        expect(ids(await dueAll(at(10_000))).sort()).toEqual(
          [otherManual.id, otherEvent.id, otherEndpoint.id, followUp.id].sort(),
        );
        expect((await store().deliveries.countPending([webhookId])).get(webhookId)).toBe(3);

        // Repeating the write (after a crash) changes nothing.
        await store().deliveries.record([succeeded(manual)]);
        expect(await get(automatic)).toEqual({ ...automatic, status: "cancelled", error: "superseded" });
      });

      it("leaves a result of the same batch to its own outcome, and a record superseded in flight takes its send's outcome", async () => {
        const scope = newScope();
        const pair = { webhookId: uuid(), eventId: `evt_${uuid().replaceAll("-", "")}` };
        const automatic = aDelivery(scope, { ...pair, attempt: 2 });
        const manual = aDelivery(scope, { ...pair, attempt: 3, trigger: "manual" });
        await store().deliveries.insertMany([automatic, manual]);
        await store().deliveries.record([failed(automatic), succeeded(manual)]);
        expect(await store().deliveries.get(scope, automatic.id)).toMatchObject({
          status: "failed",
          error: "http_status",
          responseStatus: 500,
        });

        const inFlight = aDelivery(scope, { ...pair, attempt: 4 });
        const again = aDelivery(scope, { ...pair, attempt: 5, trigger: "manual" });
        await store().deliveries.insertMany([inFlight, again]);
        await store().deliveries.record([succeeded(again)]);
        expect(await store().deliveries.get(scope, inFlight.id)).toMatchObject({
          status: "cancelled",
          error: "superseded",
        });
        await store().deliveries.record([failed(inFlight, { acknowledgedInFlight: true })]);
        expect(await store().deliveries.get(scope, inFlight.id)).toMatchObject({
          status: "failed",
          error: "http_status",
          attemptedAt: at(50),
        });
      });

      it("a result without acknowledgement cancels nothing", async () => {
        const scope = newScope();
        const pair = { webhookId: uuid(), eventId: `evt_${uuid().replaceAll("-", "")}` };
        const automatic = aDelivery(scope, { ...pair, attempt: 2 });
        const manual = aDelivery(scope, { ...pair, attempt: 3, trigger: "manual" });
        await store().deliveries.insertMany([automatic, manual]);
        await store().deliveries.record([succeeded(manual, { acknowledges: null })]);
        expect(await store().deliveries.get(scope, automatic.id)).toEqual(automatic);
      });
    });
  });
}
