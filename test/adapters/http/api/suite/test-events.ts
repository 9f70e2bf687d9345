import { describe, expect, it } from "vitest";
import { unwrap } from "../../../../../clients/typescript/client.ts";
import {
  DELIVERED,
  expectDelivery,
  expectEnvelope,
  expectInvalid,
  expectProblem,
  MILLIS,
  SENT,
  type Suite,
} from "./context.ts";

/** The API suite's test events cases. */
export function testEventCases(s: Suite): void {
  const { newProject, send, createWebhook, publish, deliveriesOf, pendingOrAttempted } = s;
  describe("test events and recovery", () => {
    const HOUR = 3_600_000;
    const iso = (ms: number) => new Date(ms).toISOString();

    it("POST /webhooks/{id}/test sends a sample operational event, to check an alerting endpoint's wiring", async () => {
      const { api } = await newProject();
      const ops = await createWebhook(api, ["endpoint.disabled", "delivery.exhausted"]);
      const res = await api.POST("/api/v1/webhooks/{id}/test", {
        params: { path: { id: ops.id } },
        body: { type: "delivery.exhausted" },
      });
      expect(res.response.status).toBe(202);
      const event = expectEnvelope(res.data!.event, false);
      expect(event).toMatchObject({ type: "delivery.exhausted", data: { endpoint_id: event.resource_id } });
      expect(expectDelivery(res.data!.delivery)).toMatchObject({
        webhook_id: ops.id,
        event_type: "delivery.exhausted",
      });
    });

    it("POST /webhooks/{id}/test sends a sample of a subscribed type to that endpoint only (202)", async () => {
      const { api, tenant_id, project_id } = await newProject();
      const w = await createWebhook(api, [DELIVERED, SENT]);
      const bystander = await createWebhook(api, [SENT]);
      const res = await api.POST("/api/v1/webhooks/{id}/test", {
        params: { path: { id: w.id } },
        body: { type: SENT },
      });
      expect(res.response.status).toBe(202);
      expect(Object.keys(res.data as object).sort()).toEqual(["delivery", "event"]);
      const event = expectEnvelope(res.data!.event, false);
      expect(event).toMatchObject({ type: SENT, tenant_id, project_id });
      expect(event.data).toMatchObject({ status: "sent", message_id: event.resource_id });
      const delivery = expectDelivery(res.data!.delivery);
      expect(delivery).toMatchObject({
        webhook_id: w.id,
        event_id: event.id,
        event_type: SENT,
        attempt: 1,
        trigger: "automatic",
        url: w.url,
      });
      expect(pendingOrAttempted()).toContain(delivery.status);

      expect((await deliveriesOf(api, w.id)).map((d) => d.id)).toEqual([delivery.id]);
      expect(await deliveriesOf(api, bystander.id)).toEqual([]);
      const stored = await unwrap(api.GET("/api/v1/events/{id}", { params: { path: { id: event.id } } }));
      expect(stored).toEqual(event);
    });

    it("POST /webhooks/{id}/test without a body sends the endpoint's first type", async () => {
      const { api, token } = await newProject();
      const w = await createWebhook(api, ["domain.verified", DELIVERED]);
      const bare = await api.POST("/api/v1/webhooks/{id}/test", { params: { path: { id: w.id } } });
      expect(bare.response.status).toBe(202);
      expect(bare.data!.event).toMatchObject({ type: "domain.verified", data: { status: "verified" } });
      const empty = await send("POST", `/api/v1/webhooks/${w.id}/test`, { token, json: {} });
      expect(empty.response.status).toBe(202);
      expect(empty.error).toMatchObject({ event: { type: "domain.verified" } });
      expect(await deliveriesOf(api, w.id)).toHaveLength(2);
    });

    it("POST /webhooks/{id}/test refuses a type the endpoint does not receive, or an unknown one (422)", async () => {
      const { api, token } = await newProject();
      const w = await createWebhook(api, [DELIVERED]);
      const [issue] = expectInvalid(
        await api.POST("/api/v1/webhooks/{id}/test", {
          params: { path: { id: w.id } },
          body: { type: SENT },
        }),
        ["body.type"],
      );
      expect(issue!.message).toContain(DELIVERED);
      const unknown = await send("POST", `/api/v1/webhooks/${w.id}/test`, {
        token,
        json: { type: "message.lost" },
      });
      expect(expectInvalid(unknown, ["body.type"])[0]!.message).toContain('"message.lost"');
      expect(await deliveriesOf(api, w.id)).toEqual([]);
    });

    it("POST /webhooks/{id}/test and /recover answer 409 endpoint_disabled on a disabled endpoint", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const path = { id: w.id };
      await unwrap(api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { enabled: false } }));
      const test = expectProblem(
        await api.POST("/api/v1/webhooks/{id}/test", { params: { path } }),
        409,
        "endpoint_disabled",
      );
      expect(test.detail).toContain("manual");
      expectProblem(
        await api.POST("/api/v1/webhooks/{id}/recover", {
          params: { path },
          body: { since: iso(Date.now() - HOUR) },
        }),
        409,
        "endpoint_disabled",
      );
      expect(await deliveriesOf(api, w.id)).toEqual([]);
    });

    it("POST /webhooks/{id}/test and /recover answer 404 for unknown, malformed and foreign ids", async () => {
      const owner = await newProject();
      const w = await createWebhook(owner.api);
      const stranger = await newProject({ tenantId: owner.tenant_id });
      const since = iso(Date.now() - HOUR);
      const cases = [
        [owner.api, crypto.randomUUID()],
        [owner.api, "nope"],
        [stranger.api, w.id],
      ] as const;
      for (const [api, id] of cases) {
        const path = { id };
        expectProblem(await api.POST("/api/v1/webhooks/{id}/test", { params: { path } }), 404, "not_found");
        expectProblem(
          await api.POST("/api/v1/webhooks/{id}/recover", { params: { path }, body: { since } }),
          404,
          "not_found",
        );
      }
      expect(await deliveriesOf(owner.api, w.id)).toEqual([]);
    });

    it("POST /webhooks/{id}/recover queues one manual delivery per failed or skipped event in the window", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api, [DELIVERED, SENT]);
      const path = { id: w.id };
      const since = iso(Date.now() - HOUR);
      // Events published while the endpoint is disabled get a `skipped` record, which nothing retries.
      await unwrap(api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { enabled: false } }));
      const missed = [await publish(api, DELIVERED), await publish(api, SENT)];
      await unwrap(api.POST("/api/v1/webhooks/{id}/enable", { params: { path } }));
      expect((await deliveriesOf(api, w.id)).map((d) => d.status)).toEqual(["skipped", "skipped"]);

      // A window that ends before the outage finds nothing.
      const early = { since: iso(Date.now() - 3 * HOUR), until: iso(Date.now() - 2 * HOUR) };
      const before = await api.POST("/api/v1/webhooks/{id}/recover", { params: { path }, body: early });
      expect(before.response.status).toBe(202);
      expect(before.data).toEqual({ queued: 0, ...early });

      const res = await api.POST("/api/v1/webhooks/{id}/recover", { params: { path }, body: { since } });
      expect(res.response.status).toBe(202);
      expect(Object.keys(res.data as object).sort()).toEqual(["queued", "since", "until"]);
      expect(res.data!.queued).toBe(2);
      expect(res.data!.since).toBe(since);
      expect(res.data!.until).toMatch(MILLIS);
      expect(Date.parse(res.data!.until)).toBeGreaterThan(Date.parse(since));

      const all = (await deliveriesOf(api, w.id)).map(expectDelivery);
      const manual = all.filter((d) => d.trigger === "manual");
      expect(manual.map((d) => d.event_id).sort()).toEqual(missed.map((e) => e.id).sort());
      for (const d of manual) {
        expect(d).toMatchObject({ attempt: 2, webhook_id: w.id, url: w.url });
        expect(pendingOrAttempted()).toContain(d.status);
      }
      if (!s.target().deliversInBackground) {
        // The latest delivery of each event is now pending: a second recovery queues nothing more.
        const again = await unwrap(
          api.POST("/api/v1/webhooks/{id}/recover", { params: { path }, body: { since } }),
        );
        expect(again.queued).toBe(0);
        expect(await deliveriesOf(api, w.id)).toHaveLength(4);
      }
    });

    it("POST /webhooks/{id}/recover validates the window (422)", async () => {
      const { api, token } = await newProject();
      const w = await createWebhook(api);
      const recover = (json: unknown) => send("POST", `/api/v1/webhooks/${w.id}/recover`, { token, json });
      const now = Date.now();
      const tooLong = expectInvalid(await recover({ since: iso(now - 15 * 24 * HOUR) }), ["body.since"]);
      expect(tooLong[0]!.message).toContain("14 days");
      expectInvalid(await recover({ since: iso(now - 20 * 24 * HOUR), until: iso(now - 5 * 24 * HOUR) }), [
        "body.since",
      ]);
      const backwards = expectInvalid(await recover({ since: iso(now - HOUR), until: iso(now - 2 * HOUR) }), [
        "body.until",
      ]);
      expect(backwards[0]!.message).toContain("after since");
      expectInvalid(await recover({ since: iso(now - HOUR), until: iso(now - HOUR) }), ["body.until"]);
      expectInvalid(await recover({}), ["body.since"]);
      expectInvalid(await recover({ since: "yesterday", until: 5 }), ["body.since", "body.until"]);
      expectInvalid(await send("POST", `/api/v1/webhooks/${w.id}/recover`, { token }), ["body.since"]);
      // Exactly 14 days is allowed.
      const edge = await recover({ since: iso(now - 14 * 24 * HOUR), until: iso(now) });
      expect(edge.response.status).toBe(202);
      expect(edge.error).toMatchObject({ queued: 0 });
    });
  });
}
