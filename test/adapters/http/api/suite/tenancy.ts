import { describe, expect, it } from "vitest";
import { unwrap } from "../../../../../clients/typescript/client.ts";
import { expectProblem, type Suite } from "./context.ts";

/** The API suite's tenancy cases. */
export function tenancyCases(s: Suite): void {
  const { newProject, createWebhook, publish, deliveriesOf } = s;
  describe("tenancy", () => {
    it("another project gets 404 on every call naming the first project's resources", async () => {
      const owner = await newProject();
      const w = await createWebhook(owner.api);
      const event = await publish(owner.api);
      const [delivery] = await deliveriesOf(owner.api, w.id);
      const sameTenant = await newProject({ tenantId: owner.tenant_id });
      expect(sameTenant.tenant_id).toBe(owner.tenant_id);
      expect(sameTenant.project_id).not.toBe(owner.project_id);
      const otherTenant = await newProject();

      for (const { api } of [sameTenant, otherTenant]) {
        const id = { path: { id: w.id } };
        const did = { path: { delivery_id: delivery!.id } };
        const calls = [
          api.GET("/api/v1/webhooks/{id}", { params: id }),
          api.PATCH("/api/v1/webhooks/{id}", { params: id, body: { description: "mine now" } }),
          api.POST("/api/v1/webhooks/{id}/rotate", { params: id }),
          api.POST("/api/v1/webhooks/{id}/enable", { params: id }),
          api.DELETE("/api/v1/webhooks/{id}", { params: id }),
          api.GET("/api/v1/webhooks/{id}/deliveries", { params: id }),
          api.GET("/api/v1/webhooks/deliveries/{delivery_id}", { params: did }),
          api.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", { params: did }),
          api.GET("/api/v1/events/{id}", { params: { path: { id: event.id } } }),
        ];
        for (const res of await Promise.all(calls)) expectProblem(res, 404, "not_found");
        expect((await unwrap(api.GET("/api/v1/webhooks"))).data).toEqual([]);
      }

      const still = await unwrap(owner.api.GET("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } }));
      expect(still).toMatchObject({ id: w.id, description: null, enabled: true });
      expect((await deliveriesOf(owner.api, w.id)).filter((d) => d.trigger === "manual")).toEqual([]);
    });

    it("a published event reaches only the publishing project's endpoints", async () => {
      const a = await newProject();
      const b = await newProject({ tenantId: a.tenant_id });
      const wa = await createWebhook(a.api);
      const wb = await createWebhook(b.api);
      const event = await publish(a.api);
      expect(event.endpoints).toBe(1);
      expect((await deliveriesOf(a.api, wa.id)).map((d) => d.event_id)).toEqual([event.id]);
      expect(await deliveriesOf(b.api, wb.id)).toEqual([]);
    });
  });
}
