import { describe, expect, it } from "vitest";
import { type Delivery, paginate, unwrap } from "../../../../../clients/typescript/client.ts";
import { DELIVERED, expectDelivery, expectProblem, SENT, type Suite } from "./context.ts";

/** The API suite's deliveries cases. */
export function deliveryCases(s: Suite): void {
  const { newProject, createWebhook, publish, deliveriesOf } = s;
  describe("deliveries", () => {
    it("GET /webhooks/deliveries/{delivery_id} returns one record", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const event = await publish(api);
      const [listed] = await deliveriesOf(api, w.id);
      const got = expectDelivery(
        await unwrap(
          api.GET("/api/v1/webhooks/deliveries/{delivery_id}", {
            params: { path: { delivery_id: listed!.id } },
          }),
        ),
      );
      expect(got).toMatchObject({ id: listed!.id, webhook_id: w.id, event_id: event.id, attempt: 1 });
    });

    it("GET /webhooks/{id}/deliveries filters by status, event_type, event_id, since and until", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api, [DELIVERED, SENT]);
      const e1 = await publish(api, DELIVERED);
      const e2 = await publish(api, SENT);
      const e3 = await publish(api, DELIVERED);
      const all = (await deliveriesOf(api, w.id)).filter((d) => d.attempt === 1);
      expect(all.map((d) => d.event_id)).toEqual([e3.id, e2.id, e1.id]);

      const byType = await deliveriesOf(api, w.id, { event_type: SENT });
      expect(byType.length).toBeGreaterThan(0);
      expect(byType.every((d) => d.event_type === SENT && d.event_id === e2.id)).toBe(true);
      const byEvent = await deliveriesOf(api, w.id, { event_id: e1.id });
      expect(byEvent.length).toBeGreaterThan(0);
      expect(byEvent.every((d) => d.event_id === e1.id)).toBe(true);
      const none = await deliveriesOf(api, w.id, { status: "cancelled" });
      expect(none).toEqual([]);
      if (!s.target().deliversInBackground) {
        expect((await deliveriesOf(api, w.id, { status: "pending" })).map((d) => d.event_id)).toEqual([
          e3.id,
          e2.id,
          e1.id,
        ]);
      }

      const pivot = all[1]!.created_at;
      const since = await deliveriesOf(api, w.id, { since: pivot });
      const until = await deliveriesOf(api, w.id, { until: pivot });
      expect(since.every((d) => Date.parse(d.created_at) >= Date.parse(pivot))).toBe(true);
      expect(until.every((d) => Date.parse(d.created_at) < Date.parse(pivot))).toBe(true);
      expect(since.map((d) => d.event_id)).toContain(e2.id);
      expect(until.map((d) => d.event_id)).not.toContain(e2.id);
      const future = new Date(Date.now() + 3_600_000).toISOString();
      expect(await deliveriesOf(api, w.id, { since: future })).toEqual([]);
    });

    it("GET /webhooks/{id}/deliveries pages over more than two pages without duplicates or gaps", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const published: string[] = [];
      for (let i = 0; i < 7; i++) published.push((await publish(api)).id);
      const seen: Delivery[] = [];
      let pages = 0;
      for await (const d of paginate(async (cursor) => {
        pages++;
        return unwrap(
          api.GET("/api/v1/webhooks/{id}/deliveries", {
            params: { path: { id: w.id }, query: { limit: 3, cursor, event_type: DELIVERED } },
          }),
        );
      })) {
        seen.push(d);
      }
      expect(pages).toBeGreaterThanOrEqual(3);
      expect(new Set(seen.map((d) => d.id)).size).toBe(seen.length);
      const created = seen.map((d) => Date.parse(d.created_at));
      expect(created).toEqual([...created].sort((x, y) => y - x));
      const firsts = seen.filter((d) => d.attempt === 1).map((d) => d.event_id);
      expect(firsts).toEqual([...published].reverse());
      if (!s.target().deliversInBackground) expect(seen).toHaveLength(7);
    });

    it("POST /webhooks/deliveries/{id}/retry queues a manual attempt n+1 (202)", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const event = await publish(api);
      const [first] = await deliveriesOf(api, w.id);
      const res = await api.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", {
        params: { path: { delivery_id: first!.id } },
      });
      expect(res.response.status).toBe(202);
      const retried = expectDelivery(res.data);
      expect(retried).toMatchObject({
        webhook_id: w.id,
        event_id: event.id,
        event_type: DELIVERED,
        trigger: "manual",
        status: "pending",
        url: w.url,
        response_status: null,
        error: null,
        attempted_at: null,
        next_attempt_at: null,
      });
      expect(retried.id).not.toBe(first!.id);
      if (s.target().deliversInBackground) expect(retried.attempt).toBeGreaterThanOrEqual(2);
      else expect(retried.attempt).toBe(2);
      const ids = (await deliveriesOf(api, w.id)).map((d) => d.id);
      expect(ids).toContain(retried.id);
      expect(ids).toContain(first!.id);
    });

    it("retry on a disabled endpoint answers 409 endpoint_disabled; after enable it is accepted", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path: { id: w.id } }, body: { enabled: false } }),
      );
      await publish(api);
      const [skipped] = await deliveriesOf(api, w.id);
      expect(skipped!.status).toBe("skipped");
      const path = { delivery_id: skipped!.id };
      const refused = expectProblem(
        await api.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", { params: { path } }),
        409,
        "endpoint_disabled",
      );
      expect(refused.detail).toContain("manual");
      await unwrap(api.POST("/api/v1/webhooks/{id}/enable", { params: { path: { id: w.id } } }));
      const again = await unwrap(
        api.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", { params: { path } }),
      );
      expect(again).toMatchObject({ trigger: "manual", status: "pending", attempt: 2 });
    });
  });
}
