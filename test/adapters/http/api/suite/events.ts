import { describe, expect, it } from "vitest";
import { unwrap } from "../../../../../clients/typescript/client.ts";
import {
  DELIVERED,
  expectDelivery,
  expectEnvelope,
  expectInvalid,
  expectProblem,
  messageData,
  publishBody,
  SENT,
  type Suite,
} from "./context.ts";

/** The API suite's events cases. */
export function eventCases(s: Suite): void {
  const { newProject, send, createWebhook, publish, deliveriesOf, pendingOrAttempted } = s;
  describe("events", () => {
    it("POST /events answers 202 with the envelope and fans out to subscribed endpoints only", async () => {
      const { api, tenant_id, project_id } = await newProject();
      const a = await createWebhook(api, [DELIVERED]);
      const b = await createWebhook(api, [DELIVERED, SENT]);
      const off = await createWebhook(api, [DELIVERED]);
      const other = await createWebhook(api, [SENT]);
      await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path: { id: off.id } }, body: { enabled: false } }),
      );

      const data = messageData(DELIVERED);
      const res = await api.POST("/api/v1/events", { body: publishBody(DELIVERED, data) });
      expect(res.response.status).toBe(202);
      expect(res.response.headers.get("idempotent-replayed")).toBeNull();
      const event = expectEnvelope(res.data, true);
      expect(event).toMatchObject({
        type: DELIVERED,
        tenant_id,
        project_id,
        resource_id: data.message_id,
        data,
        endpoints: 3,
      });

      for (const w of [a, b]) {
        const ds = (await deliveriesOf(api, w.id)).map(expectDelivery);
        expect(ds).toHaveLength(1);
        expect(ds[0]).toMatchObject({
          webhook_id: w.id,
          event_id: event.id,
          event_type: DELIVERED,
          attempt: 1,
          trigger: "automatic",
          url: w.url,
        });
        expect(pendingOrAttempted()).toContain(ds[0]!.status);
      }
      const skipped = await deliveriesOf(api, off.id);
      expect(skipped).toHaveLength(1);
      expect(skipped[0]).toMatchObject({
        status: "skipped",
        attempt: 1,
        attempted_at: null,
        response_status: null,
        error: null,
      });
      expect(await deliveriesOf(api, other.id)).toEqual([]);
    });

    it("POST /events with no subscriber answers endpoints: 0; occurred_at is kept with milliseconds", async () => {
      const { api } = await newProject();
      const res = await unwrap(
        api.POST("/api/v1/events", {
          body: publishBody(SENT, messageData(SENT), { occurred_at: "2026-11-21T10:00:00+01:00" }),
        }),
      );
      expect(res.endpoints).toBe(0);
      expect(res.occurred_at).toBe("2026-11-21T09:00:00.000Z");
    });

    it("GET /events/{id} returns the envelope as published", async () => {
      const { api } = await newProject();
      const { endpoints, ...envelope } = await publish(api);
      expect(endpoints).toBe(0);
      const got = await unwrap(api.GET("/api/v1/events/{id}", { params: { path: { id: envelope.id } } }));
      expectEnvelope(got, false);
      expect(got).toEqual(envelope);
    });

    it("an Idempotency-Key repeat returns the first answer without a second fan-out", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const key = `order-${crypto.randomUUID()}`;
      const body = publishBody(DELIVERED, messageData(DELIVERED));
      const first = await api.POST("/api/v1/events", {
        body,
        params: { header: { "idempotency-key": key } },
      });
      const again = await api.POST("/api/v1/events", {
        body,
        params: { header: { "idempotency-key": key } },
      });
      expect(first.response.status).toBe(202);
      expect(again.response.status).toBe(202);
      expect(again.response.headers.get("idempotent-replayed")).toBe("true");
      expect(again.data).toEqual(first.data);
      const firstAttempts = (await deliveriesOf(api, w.id)).filter((d) => d.attempt === 1);
      expect(firstAttempts).toHaveLength(1);
      expect(firstAttempts[0]!.event_id).toBe(first.data!.id);

      const other = await api.POST("/api/v1/events", {
        body: publishBody(DELIVERED, messageData(DELIVERED)),
        params: { header: { "idempotency-key": key } },
      });
      expectProblem(other, 409, "conflict");
      const fresh = await publish(api, DELIVERED, `${key}-2`);
      expect(fresh.id).not.toBe(first.data!.id);
    });

    it("POST /events validates the Idempotency-Key header", async () => {
      const { api } = await newProject();
      const res = await api.POST("/api/v1/events", {
        body: publishBody(DELIVERED, messageData(DELIVERED)),
        params: { header: { "idempotency-key": "k".repeat(256) } },
      });
      expectInvalid(res, ["header.idempotency-key"]);
    });

    it("operational types (ADR 20): an endpoint subscribes to them by name, a publisher cannot publish them (422 on body.type, alone in a batch)", async () => {
      const { api, token } = await newProject();
      const ops = await createWebhook(api, [
        "endpoint.disabled",
        "endpoint.failing",
        "endpoint.recovered",
        "delivery.exhausted",
      ]);
      expect(ops.events).toEqual([
        "endpoint.disabled",
        "endpoint.failing",
        "endpoint.recovered",
        "delivery.exhausted",
      ]);
      const listed = await unwrap(
        api.GET("/api/v1/webhooks", { params: { query: { event: "endpoint.failing" } } }),
      );
      expect(listed.data.map((w) => w.id)).toEqual([ops.id]);
      const data = {
        endpoint_id: ops.id,
        url: ops.url,
        disabled_reason: "manual",
        disabled_at: "2026-11-21T10:00:00.000Z",
      };
      const refused = expectInvalid(
        await send("POST", "/api/v1/events", { token, json: { type: "endpoint.disabled", data } }),
        ["body.type"],
      );
      expect(refused[0]!.message).toContain("emitted by Herald");
      const batch = await send("POST", "/api/v1/events/batch", {
        token,
        json: {
          events: [{ type: "endpoint.failing", data }, publishBody(DELIVERED, messageData(DELIVERED))],
        },
      });
      expect(batch.response.status).toBe(200);
      const results = (
        batch.error as { data: { status: number; problem?: { errors?: { path: string }[] } }[] }
      ).data;
      expect(results.map((r) => r.status)).toEqual([422, 202]);
      expect(results[0]!.problem?.errors?.map((e) => e.path)).toEqual(["body.events.0.type"]);
      // Nothing was stored for the operations endpoint.
      expect(await deliveriesOf(api, ops.id)).toEqual([]);
    });

    it("POST /events rejects an unknown type, bad data and a foreign resource_id with 422", async () => {
      const { token } = await newProject();
      const post = (json: unknown) => send("POST", "/api/v1/events", { token, json });
      const unknown = expectInvalid(await post({ type: "message.teleported", data: {} }), ["body.type"]);
      expect(unknown[0]!.message).toContain("message.teleported");
      expectInvalid(await post({ data: messageData() }), ["body.type"]);
      expectInvalid(await post({ type: DELIVERED }), ["body.data"]);
      expectInvalid(await post({ type: DELIVERED, data: "text" }), ["body.data"]);
      const badStatus = expectInvalid(
        await post({ type: DELIVERED, data: { ...messageData(), status: "sent" } }),
        ["body.data.status"],
      );
      expect(badStatus[0]!.message).toContain("delivered");
      expectInvalid(
        await post({ type: DELIVERED, data: { ...messageData(), recipient: "not-an-address" } }),
        ["body.data.recipient"],
      );
      expectInvalid(
        await post({ type: DELIVERED, data: { ...messageData(), message_id: "m-1", channel: "fax" } }),
        ["body.data.message_id", "body.data.channel"],
      );
      expectInvalid(await post({ type: DELIVERED, data: messageData(), resource_id: crypto.randomUUID() }), [
        "body.resource_id",
      ]);
      expectInvalid(await post({ type: DELIVERED, data: messageData(), occurred_at: "yesterday" }), [
        "body.occurred_at",
      ]);
    });
  });
}
