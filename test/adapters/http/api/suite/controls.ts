import { describe, expect, it } from "vitest";
import { unwrap } from "../../../../../clients/typescript/client.ts";
import {
  DELIVERED,
  expectInvalid,
  expectWebhook,
  expectWebhookWithSecret,
  receiverUrl,
  type Suite,
} from "./context.ts";

/** The API suite's cases for an endpoint's delivery controls: its rate limit and ordering (ADR 16). */
export function controlCases(s: Suite): void {
  const { newProject, send, createWebhook, publish } = s;
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

    it("POST /webhooks takes ordering fifo; held counts what waits behind the head; PATCH switches it back", async () => {
      const { api } = await newProject();
      const plain = await createWebhook(api);
      expect(plain).toMatchObject({ ordering: "none", held: 0 });
      // With an engine running behind the target, the first event's request is held in flight at the
      // receiver, so the FIFO endpoint stays at its head and what the test sees does not race the engine.
      const target = s.target();
      const holding = target.deliversInBackground ? await target.holdingReceiver?.() : undefined;
      if (target.deliversInBackground && !holding)
        throw new Error("a background engine needs holdingReceiver");
      const fifo = expectWebhookWithSecret(
        await unwrap(
          api.POST("/api/v1/webhooks", {
            body: { url: holding?.url ?? receiverUrl(), events: [DELIVERED], ordering: "fifo" },
          }),
        ),
      );
      expect(fifo).toMatchObject({ ordering: "fifo", held: 0 });
      for (let i = 0; i < 3; i++) await publish(api);
      await holding?.held(1);
      const path = { id: fifo.id };
      // Three pending: one at the head (in flight, or not sent without an engine), two held behind it.
      const got = expectWebhook(await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path } })));
      expect(got).toMatchObject({ ordering: "fifo", held: 2 });
      expect(holding?.received ?? 1).toBe(1);
      const listed = (await unwrap(api.GET("/api/v1/webhooks"))).data;
      expect(listed.find((w) => w.id === fifo.id)?.held).toBe(2);
      // The unordered endpoint got the same three events and holds nothing back.
      expect(listed.find((w) => w.id === plain.id)).toMatchObject({ ordering: "none", held: 0 });
      const unordered = await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { ordering: "none" } }),
      );
      expect(unordered).toMatchObject({ ordering: "none", held: 0 });
      const again = await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { ordering: "fifo" } }),
      );
      expect(again.ordering).toBe("fifo");
      holding?.release(200);
    });

    it("refuses a bad ordering with 422 naming its path, and a client may not set held", async () => {
      const { token, api } = await newProject();
      const w = await createWebhook(api);
      for (const ordering of ["FIFO", "lifo", "", null, 1]) {
        expectInvalid(
          await send("POST", "/api/v1/webhooks", {
            token,
            json: { url: receiverUrl(), events: [DELIVERED], ordering },
          }),
          ["body.ordering"],
        );
        expectInvalid(await send("PATCH", `/api/v1/webhooks/${w.id}`, { token, json: { ordering } }), [
          "body.ordering",
        ]);
      }
      // held is the server's: not a field of the request (and so nothing to change either).
      expectInvalid(await send("PATCH", `/api/v1/webhooks/${w.id}`, { token, json: { held: 0 } }), [
        "body",
        "body.held",
      ]);
      expect((await unwrap(api.GET("/api/v1/webhooks"))).data.map((x) => x.ordering)).toEqual(["none"]);
    });
  });
}
