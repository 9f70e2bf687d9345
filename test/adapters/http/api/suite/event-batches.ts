import { describe, expect, it } from "vitest";
import {
  type BatchEventResult,
  type BatchFailed,
  type BatchPublished,
  type EventType,
  type HeraldClient,
  isPublished,
  type PublishBatchEvent,
  unwrap,
} from "../../../../../clients/typescript/client.ts";
import {
  DELIVERED,
  expectDelivery,
  expectEnvelope,
  expectInvalid,
  expectProblem,
  messageData,
  PROBLEM_KEYS,
  ProblemBody,
  SENT,
  type Suite,
} from "./context.ts";

/** An event as the batch takes it. */
const item = (
  type: EventType = DELIVERED,
  extra: Omit<Partial<PublishBatchEvent>, "type" | "data"> & { data?: object } = {},
): PublishBatchEvent => ({ type, data: messageData(type), ...extra }) as PublishBatchEvent;

/** Something the schema refuses, sent through the typed client all the same. */
const malformed = (value: unknown) => value as PublishBatchEvent;

function expectPublished(r: BatchEventResult | undefined): BatchPublished {
  expect(r?.status).toBe(202);
  expect(Object.keys(r as object).sort()).toEqual(["event", "replayed", "status"]);
  if (!r || !isPublished(r)) throw new Error("not published");
  expectEnvelope(r.event, true);
  return r;
}

/** A failed result: the problem document POST /events would have answered, with this status and code. */
function expectFailed(r: BatchEventResult | undefined, status: number, code: string): BatchFailed {
  expect(r).toBeDefined();
  expect(Object.keys(r as object).sort()).toEqual(["problem", "status"]);
  if (!r || isPublished(r)) throw new Error("published");
  const failed = r as BatchFailed;
  expect(failed.status).toBe(status);
  const problem = ProblemBody.parse(failed.problem);
  const keys = code === "validation_failed" ? [...PROBLEM_KEYS, "errors"].sort() : PROBLEM_KEYS;
  expect(Object.keys(problem).sort()).toEqual(keys);
  expect(problem).toMatchObject({ status, code, type: `https://herald.dev/problems/${code}` });
  return failed;
}

const issuePaths = (r: BatchFailed) => (ProblemBody.parse(r.problem).errors ?? []).map((e) => e.path).sort();

async function batch(api: HeraldClient, events: PublishBatchEvent[]) {
  const res = await api.POST("/api/v1/events/batch", { body: { events } });
  expect(res.response.status).toBe(200);
  expect(res.data?.data).toHaveLength(events.length);
  return res.data!.data;
}

/** The API suite's batch publish cases (POST /events/batch). */
export function eventBatchCases(s: Suite): void {
  const { newProject, send, createWebhook, deliveriesOf, pendingOrAttempted } = s;
  describe("event batches", () => {
    it("POST /events/batch stores every event, fans each out, and answers one result per event in order", async () => {
      const { api, tenant_id, project_id } = await newProject();
      const a = await createWebhook(api, [DELIVERED]);
      const b = await createWebhook(api, [DELIVERED, SENT]);
      // An engagement event carries the message's delivery status.
      const opened = item("message.opened", {
        data: { ...messageData("message.opened"), status: "delivered" },
      });
      const events = [item(DELIVERED), item(SENT), opened];
      const results = await batch(api, events);
      const published = results.map(expectPublished);
      expect(published.map((r) => r.event.type)).toEqual([DELIVERED, SENT, "message.opened"]);
      expect(published.map((r) => r.event.endpoints)).toEqual([2, 1, 0]);
      expect(published.map((r) => r.replayed)).toEqual([false, false, false]);
      for (const [i, r] of published.entries()) {
        expect(r.event).toMatchObject({ tenant_id, project_id, data: events[i]!.data });
        expect(r.event.resource_id).toBe((events[i]!.data as { message_id: string }).message_id);
        const { endpoints, ...envelope } = r.event;
        expect(endpoints).toBeGreaterThanOrEqual(0);
        expect(
          await unwrap(api.GET("/api/v1/events/{id}", { params: { path: { id: envelope.id } } })),
        ).toEqual(envelope);
      }
      expect(new Set(published.map((r) => r.event.id)).size).toBe(3);
      const toA = (await deliveriesOf(api, a.id)).map(expectDelivery);
      const toB = (await deliveriesOf(api, b.id)).map(expectDelivery);
      expect(toA.map((d) => d.event_id)).toEqual([published[0]!.event.id]);
      expect(toB.map((d) => d.event_id).sort()).toEqual(
        [published[0]!.event.id, published[1]!.event.id].sort(),
      );
      for (const d of [...toA, ...toB]) {
        expect(d).toMatchObject({ attempt: 1, trigger: "automatic" });
        expect(pendingOrAttempted()).toContain(d.status);
      }
    });

    it("one bad event fails alone, with the problem POST /events would answer and its path in the batch", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api, [DELIVERED]);
      const results = await batch(api, [
        item(DELIVERED),
        malformed({ type: DELIVERED, data: { ...messageData(), channel: "fax" } }),
        malformed({ ...item(DELIVERED), colour: "blue" }),
        malformed(42),
        item(DELIVERED, { resource_id: crypto.randomUUID() }),
        malformed({ type: "message.teleported", data: {} }),
        item(DELIVERED, { occurred_at: "2026-11-21T10:00:00+01:00" }),
      ]);
      const ok = [results[0], results[6]].map(expectPublished);
      expect(ok[1]!.event.occurred_at).toBe("2026-11-21T09:00:00.000Z");
      expect(issuePaths(expectFailed(results[1], 422, "validation_failed"))).toEqual([
        "body.events.1.data.channel",
      ]);
      expect(issuePaths(expectFailed(results[2], 422, "validation_failed"))).toEqual([
        "body.events.2.colour",
      ]);
      expect(issuePaths(expectFailed(results[3], 422, "validation_failed"))).toEqual(["body.events.3"]);
      expect(issuePaths(expectFailed(results[4], 422, "validation_failed"))).toEqual([
        "body.events.4.resource_id",
      ]);
      const unknownType = expectFailed(results[5], 422, "validation_failed");
      expect(issuePaths(unknownType)).toEqual(["body.events.5.type"]);
      expect(JSON.stringify(unknownType.problem)).toContain("message.teleported");
      // Only the two good events were stored and fanned out.
      const ds = await deliveriesOf(api, w.id);
      expect(ds.map((d) => d.event_id).sort()).toEqual(ok.map((r) => r.event.id).sort());
    });

    it("each event's idempotency_key works as the Idempotency-Key header does, across batches and POST /events", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api, [DELIVERED]);
      const key = `order-${crypto.randomUUID()}`;
      const keyed = item(DELIVERED, { idempotency_key: key });
      const [first] = await batch(api, [keyed]);
      const original = expectPublished(first);
      expect(original.replayed).toBe(false);

      // Again in a batch, and as POST /events with the header: the first answer, no second fan-out.
      const [again, fresh, reused] = await batch(api, [
        keyed,
        item(DELIVERED, { idempotency_key: `${key}-2` }),
        item(DELIVERED, { idempotency_key: key }), // same key, another body
      ]);
      expect(expectPublished(again)).toEqual({ ...original, replayed: true });
      expect(expectPublished(fresh).event.id).not.toBe(original.event.id);
      expect(expectFailed(reused, 409, "conflict").problem.detail).toContain("Idempotency-Key");
      const { idempotency_key: _, ...body } = keyed;
      const single = await api.POST("/api/v1/events", {
        body,
        params: { header: { "idempotency-key": key } },
      });
      expect(single.response.status).toBe(202);
      expect(single.response.headers.get("idempotent-replayed")).toBe("true");
      expect(single.data).toEqual(original.event);

      // A key first used by POST /events is replayed by a batch.
      const headerKey = `${key}-header`;
      const viaHeader = await unwrap(
        api.POST("/api/v1/events", { body, params: { header: { "idempotency-key": headerKey } } }),
      );
      const [viaBatch] = await batch(api, [{ ...body, idempotency_key: headerKey }]);
      expect(expectPublished(viaBatch)).toEqual({ status: 202, event: viaHeader, replayed: true });

      const firstAttempts = (await deliveriesOf(api, w.id)).filter((d) => d.attempt === 1);
      expect(firstAttempts.map((d) => d.event_id).sort()).toEqual(
        [original.event.id, expectPublished(fresh).event.id, viaHeader.id].sort(),
      );
    });

    it("an idempotency key used twice in one batch stores one event; with another body the repeat is a 409", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api, [DELIVERED]);
      const key = `twice-${crypto.randomUUID()}`;
      const same = item(DELIVERED, { idempotency_key: key });
      const results = (await batch(api, [same, same])).map(expectPublished);
      expect(results[0]!.event).toEqual(results[1]!.event);
      expect(results.map((r) => r.replayed).sort()).toEqual([false, true]);
      expect((await deliveriesOf(api, w.id)).map((d) => d.event_id)).toEqual([results[0]!.event.id]);

      const other = `other-${crypto.randomUUID()}`;
      const mixed = await batch(api, [
        item(DELIVERED, { idempotency_key: other }),
        item(DELIVERED, { idempotency_key: other }),
      ]);
      expect(mixed.map((r) => r.status).sort()).toEqual([202, 409]);
    });

    it("POST /events/batch refuses a body that is not 1 to 100 events whole (422), and non-JSON (400)", async () => {
      const { api, token } = await newProject();
      const post = (body: unknown) =>
        api.POST("/api/v1/events/batch", { body: body as { events: PublishBatchEvent[] } });
      expectInvalid(await post({ events: [] }), ["body.events"]);
      expectInvalid(await post({ events: Array.from({ length: 101 }, () => item()) }), ["body.events"]);
      expectInvalid(await post({}), ["body.events"]);
      expectInvalid(await post({ events: item() }), ["body.events"]);
      expectInvalid(await post({ events: [item()], extra: 1 }), ["body.extra"]);
      expectInvalid(
        await api.POST("/api/v1/events/batch", {
          body: { events: [item()] },
          headers: { "Idempotency-Key": "whole-batch" },
        }),
        ["header.idempotency-key"],
      );
      const hundred = await batch(
        api,
        Array.from({ length: 100 }, () => item(SENT)),
      );
      expect(hundred.every((r) => r.status === 202)).toBe(true);
      expectProblem(
        await send("POST", "/api/v1/events/batch", {
          token,
          body: "{not json",
          headers: { "Content-Type": "application/json" },
        }),
        400,
        "invalid_json",
      );
      expectProblem(
        await s.clientFor().POST("/api/v1/events/batch", { body: { events: [item()] } }),
        401,
        "unauthorized",
      );
    });
  });
}
