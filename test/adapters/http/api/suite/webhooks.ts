import { describe, expect, it } from "vitest";
import { paginate, unwrap } from "../../../../../clients/typescript/client.ts";
import {
  DELIVERED,
  expectInvalid,
  expectProblem,
  expectWebhook,
  expectWebhookWithSecret,
  receiverUrl,
  SENT,
  type Suite,
} from "./context.ts";

/** The API suite's webhooks cases. */
export function webhookCases(s: Suite): void {
  const { newProject, send, createWebhook, publish, deliveriesOf } = s;
  describe("webhooks", () => {
    it("POST /webhooks registers an endpoint and shows its secret once (201, Location)", async () => {
      const { api } = await newProject();
      const url = receiverUrl();
      const { data, response } = await api.POST("/api/v1/webhooks", {
        body: { url, events: [DELIVERED, SENT], description: "orders" },
      });
      expect(response.status).toBe(201);
      const w = expectWebhookWithSecret(data);
      expect(w).toMatchObject({
        url,
        events: [DELIVERED, SENT],
        enabled: true,
        description: "orders",
        disabled_reason: null,
      });
      expect(response.headers.get("location")).toBe(`/api/v1/webhooks/${w.id}`);
      const bare = await unwrap(api.POST("/api/v1/webhooks", { body: { url, events: [SENT] } }));
      expect(bare.description).toBeNull();
      expect(bare.secret).not.toBe(w.secret);
    });

    it("POST /webhooks refuses unknown fields by name, server-owned ones included, and creates nothing", async () => {
      const { token, api } = await newProject();
      const url = receiverUrl();
      const res = await send("POST", "/api/v1/webhooks", {
        token,
        json: {
          url,
          evnets: [SENT],
          events: [SENT],
          id: "00000000-0000-4000-8000-000000000000",
          secret: "whsec_x",
        },
      });
      const issues = expectInvalid(res, ["body.evnets", "body.id", "body.secret"]);
      expect(issues.find((i) => i.path === "body.evnets")!.message).toBe(
        "evnets is not a field of this request",
      );
      expect((await unwrap(api.GET("/api/v1/webhooks"))).data).toEqual([]);
    });

    it("GET /webhooks/{id} and GET /webhooks never show the secret", async () => {
      const { api } = await newProject();
      const created = await createWebhook(api);
      const { secret, ...rest } = created;
      const got = expectWebhook(
        await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path: { id: created.id } } })),
      );
      expect(got).toEqual(rest);
      const list = await unwrap(api.GET("/api/v1/webhooks"));
      expect(list.data).toHaveLength(1);
      expectWebhook(list.data[0]);
      expect(list.next_cursor).toBeNull();
      expect(JSON.stringify(list)).not.toContain(secret);
      expect(JSON.stringify(list)).not.toContain("whsec_");
    });

    it("GET /webhooks filters by enabled and event, newest first", async () => {
      const { api } = await newProject();
      const a = await createWebhook(api, [DELIVERED]);
      const b = await createWebhook(api, [SENT]);
      const c = await createWebhook(api, [DELIVERED, SENT]);
      await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path: { id: b.id } }, body: { enabled: false } }),
      );
      const ids = async (query: Record<string, string>) =>
        (await unwrap(api.GET("/api/v1/webhooks", { params: { query } }))).data.map((w) => w.id);
      expect(await ids({})).toEqual([c.id, b.id, a.id]);
      expect(await ids({ enabled: "true" })).toEqual([c.id, a.id]);
      expect(await ids({ enabled: "false" })).toEqual([b.id]);
      expect(await ids({ event: SENT })).toEqual([c.id, b.id]);
      expect(await ids({ event: DELIVERED, enabled: "true" })).toEqual([c.id, a.id]);
    });

    it("GET /webhooks pages with limit and next_cursor without duplicates or gaps", async () => {
      const { api } = await newProject();
      const created: string[] = [];
      for (let i = 0; i < 7; i++) created.push((await createWebhook(api)).id);
      const sizes: number[] = [];
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await unwrap(api.GET("/api/v1/webhooks", { params: { query: { limit: 3, cursor } } }));
        sizes.push(page.data.length);
        seen.push(...page.data.map((w) => w.id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      expect(sizes).toEqual([3, 3, 1]);
      expect(seen).toEqual([...created].reverse());
      const walked: string[] = [];
      for await (const w of paginate((c) =>
        unwrap(api.GET("/api/v1/webhooks", { params: { query: { limit: 2, cursor: c } } })),
      )) {
        walked.push(w.id);
      }
      expect(walked).toEqual(seen);
    });

    it("PATCH /webhooks/{id} changes fields; enabled:false disables it as manual", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api, [DELIVERED], "before");
      const path = { id: w.id };
      const url = receiverUrl();
      const changed = expectWebhook(
        await unwrap(
          api.PATCH("/api/v1/webhooks/{id}", {
            params: { path },
            body: { url, events: [SENT], description: null },
          }),
        ),
      );
      expect(changed).toMatchObject({ id: w.id, url, events: [SENT], description: null, enabled: true });
      expect(changed.created_at).toBe(w.created_at);
      expect(Date.parse(changed.updated_at)).toBeGreaterThanOrEqual(Date.parse(w.updated_at));

      const off = await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { enabled: false } }),
      );
      expect(off).toMatchObject({ enabled: false, disabled_reason: "manual", url });
      const on = await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { enabled: true } }),
      );
      expect(on).toMatchObject({ enabled: true, disabled_reason: null });
    });

    it("POST /webhooks/{id}/rotate issues a new secret, with or without a body", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const path = { id: w.id };
      const noBody = await api.POST("/api/v1/webhooks/{id}/rotate", { params: { path } });
      expect(noBody.response.status).toBe(200);
      const r1 = expectWebhookWithSecret(noBody.data);
      expect(r1.secret).not.toBe(w.secret);
      const r2 = expectWebhookWithSecret(
        await unwrap(api.POST("/api/v1/webhooks/{id}/rotate", { params: { path }, body: {} })),
      );
      const r3 = expectWebhookWithSecret(
        await unwrap(
          api.POST("/api/v1/webhooks/{id}/rotate", {
            params: { path },
            body: { grace_period_seconds: 604800 },
          }),
        ),
      );
      expect(new Set([w.secret, r1.secret, r2.secret, r3.secret]).size).toBe(4);
      const got = await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path } }));
      expect(JSON.stringify(got)).not.toContain("whsec_");
    });

    it("POST /webhooks/{id}/rotate accepts an empty body sent as application/json", async () => {
      const { api, token } = await newProject();
      const w = await createWebhook(api);
      const res = await send("POST", `/api/v1/webhooks/${w.id}/rotate`, {
        token,
        headers: { "Content-Type": "application/json" },
        body: "",
      });
      expect(res.response.status).toBe(200);
      expectWebhookWithSecret(res.error);
    });

    it("POST /webhooks/{id}/rotate rejects a grace period outside 0-604800", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      for (const grace of [-1, 604801, 1.5]) {
        const res = await api.POST("/api/v1/webhooks/{id}/rotate", {
          params: { path: { id: w.id } },
          body: { grace_period_seconds: grace },
        });
        expectInvalid(res, ["body.grace_period_seconds"]);
      }
    });

    it("POST /webhooks/{id}/enable is idempotent and clears disabled_reason", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const path = { id: w.id };
      const already = expectWebhook(
        await unwrap(api.POST("/api/v1/webhooks/{id}/enable", { params: { path } })),
      );
      expect(already).toMatchObject({ enabled: true, disabled_reason: null });
      await unwrap(api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { enabled: false } }));
      for (let i = 0; i < 2; i++) {
        const res = await api.POST("/api/v1/webhooks/{id}/enable", { params: { path } });
        expect(res.response.status).toBe(200);
        expect(res.data).toMatchObject({ id: w.id, enabled: true, disabled_reason: null });
      }
    });

    it("DELETE /webhooks/{id} answers 204, then 404, and cancels its pending deliveries", async () => {
      const { api } = await newProject();
      const target = s.target();
      // With an engine running behind the target, the delivery is held in flight at the receiver while
      // the endpoint is deleted, so what the test sees does not depend on who wins a race.
      const holding = target.deliversInBackground ? await target.holdingReceiver?.() : undefined;
      if (target.deliversInBackground && !holding)
        throw new Error("a background engine needs holdingReceiver");
      const w = holding
        ? await unwrap(api.POST("/api/v1/webhooks", { body: { url: holding.url, events: [DELIVERED] } }))
        : await createWebhook(api);
      await publish(api);
      await holding?.held(1);
      const [pending] = await deliveriesOf(api, w.id);
      expect(pending).toBeDefined();
      expect(pending!.status).toBe("pending");
      const del = await api.DELETE("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } });
      expect(del.response.status).toBe(204);
      expect(del.data).toBeUndefined();
      expectProblem(
        await api.GET("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } }),
        404,
        "not_found",
      );
      expectProblem(
        await api.DELETE("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } }),
        404,
        "not_found",
      );
      expectProblem(
        await api.GET("/api/v1/webhooks/{id}/deliveries", { params: { path: { id: w.id } } }),
        404,
        "not_found",
      );
      const after = await unwrap(
        api.GET("/api/v1/webhooks/deliveries/{delivery_id}", {
          params: { path: { delivery_id: pending!.id } },
        }),
      );
      expect(after.status).toBe("cancelled");
      expect((await unwrap(api.GET("/api/v1/webhooks"))).data).toEqual([]);
      if (holding) {
        // The attempt in flight ends; its answer does not bring the cancelled delivery back.
        holding.release(200);
        const settled = await unwrap(
          api.GET("/api/v1/webhooks/deliveries/{delivery_id}", {
            params: { path: { delivery_id: pending!.id } },
          }),
        );
        expect(settled.status).toBe("cancelled");
        expect(holding.received).toBe(1);
        await holding.close();
      }
    });
  });
}
