import { describe, expect, it } from "vitest";
import { unwrap } from "../../../clients/typescript/client.ts";
import {
  DELIVERED,
  expectInvalid,
  expectWebhook,
  expectWebhookWithSecret,
  receiverUrl,
  type Suite,
} from "./context.ts";

/** The API suite's cases for an endpoint's delivery controls: its rate limit (ADR 16). */
export function controlCases(s: Suite): void {
  const { newProject, send, createWebhook } = s;
  describe("webhooks: delivery controls", () => {
    it("POST /webhooks takes rate_limit per second or per minute; GET, the list and PATCH show it; null removes it", async () => {
      const { api } = await newProject();
      const plain = await createWebhook(api);
      expect(plain.rate_limit).toBeNull();
      const created = expectWebhookWithSecret(
        await unwrap(
          api.POST("/api/v1/webhooks", {
            body: { url: receiverUrl(), events: [DELIVERED], rate_limit: { per_second: 5 } },
          }),
        ),
      );
      expect(created.rate_limit).toEqual({ per_second: 5 });
      const path = { id: created.id };
      const got = expectWebhook(await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path } })));
      expect(got.rate_limit).toEqual({ per_second: 5 });
      const listed = (await unwrap(api.GET("/api/v1/webhooks"))).data;
      expect(listed.find((w) => w.id === created.id)?.rate_limit).toEqual({ per_second: 5 });
      expect(listed.find((w) => w.id === plain.id)?.rate_limit).toBeNull();

      const perMinute = expectWebhook(
        await unwrap(
          api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { rate_limit: { per_minute: 300 } } }),
        ),
      );
      expect(perMinute.rate_limit).toEqual({ per_minute: 300 });
      // A change of other fields leaves the limit as it was.
      const described = await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { description: "slow receiver" } }),
      );
      expect(described.rate_limit).toEqual({ per_minute: 300 });
      const removed = await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { rate_limit: null } }),
      );
      expect(removed.rate_limit).toBeNull();
      expect((await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path } }))).rate_limit).toBeNull();
    });

    it("refuses a bad rate_limit with 422 naming its path, on POST and PATCH, and changes nothing", async () => {
      const { token, api } = await newProject();
      const w = await unwrap(
        api.POST("/api/v1/webhooks", {
          body: { url: receiverUrl(), events: [DELIVERED], rate_limit: { per_second: 5 } },
        }),
      );
      const bad: [unknown, string[]][] = [
        [{ per_second: 0 }, ["body.rate_limit.per_second"]],
        [{ per_second: 1001 }, ["body.rate_limit.per_second"]],
        [{ per_second: 2.5 }, ["body.rate_limit.per_second"]],
        [{ per_minute: 60_001 }, ["body.rate_limit.per_minute"]],
        [{ per_minute: "300" }, ["body.rate_limit.per_minute"]],
        [{}, ["body.rate_limit"]],
        [{ per_second: 5, per_minute: 300 }, ["body.rate_limit"]],
        // Not a field, and no limit given either.
        [{ per_hour: 5 }, ["body.rate_limit", "body.rate_limit.per_hour"]],
        ["5/s", ["body.rate_limit"]],
        [5, ["body.rate_limit"]],
      ];
      for (const [rateLimit, paths] of bad) {
        const created = await send("POST", "/api/v1/webhooks", {
          token,
          json: { url: receiverUrl(), events: [DELIVERED], rate_limit: rateLimit },
        });
        expectInvalid(created, paths);
        const patched = await send("PATCH", `/api/v1/webhooks/${w.id}`, {
          token,
          json: { rate_limit: rateLimit },
        });
        expectInvalid(patched, paths);
      }
      const list = (await unwrap(api.GET("/api/v1/webhooks"))).data;
      expect(list.map((x) => x.id)).toEqual([w.id]);
      expect(list[0]?.rate_limit).toEqual({ per_second: 5 });
    });
  });
}
