import { describe, expect, it } from "vitest";
import { HeraldApiError, unwrap } from "../../../clients/typescript/client.ts";
import {
  DELIVERED,
  expectInvalid,
  expectProblem,
  messageData,
  receiverUrl,
  SENT,
  type Suite,
} from "./context.ts";

/** The API suite's errors cases. */
export function errorCases(s: Suite): void {
  const { newProject, send, createWebhook } = s;
  describe("errors", () => {
    it("a body that is not JSON answers 400 invalid_json", async () => {
      const { token, api } = await newProject();
      const w = await createWebhook(api);
      const headers = { "Content-Type": "application/json" };
      for (const [method, path] of [
        ["POST", "/api/v1/webhooks"],
        ["PATCH", `/api/v1/webhooks/${w.id}`],
        ["POST", `/api/v1/webhooks/${w.id}/rotate`],
        ["POST", "/api/v1/events"],
      ] as const) {
        const res = await send(method, path, { token, headers, body: '{"url": "https://x.example",' });
        expectProblem(res, 400, "invalid_json");
      }
    });

    it("a body that is not application/json answers 415", async () => {
      const { token } = await newProject();
      const json = JSON.stringify({ url: receiverUrl(), events: [DELIVERED] });
      for (const headers of [
        { "Content-Type": "text/plain" },
        { "Content-Type": "application/x-www-form-urlencoded" },
      ]) {
        expectProblem(
          await send("POST", "/api/v1/webhooks", { token, headers, body: json }),
          415,
          "unsupported_media_type",
        );
      }
      const blob = new Request(new URL("/api/v1/events", s.target().baseUrl), {
        method: "POST",
        headers: { Authorization: `Bearer ${token}` },
        body: new Blob([json]),
      });
      const res = await (s.target().fetch ?? fetch)(blob);
      expectProblem({ response: res, error: await res.json() }, 415, "unsupported_media_type");
      expect(
        (
          await send("POST", "/api/v1/webhooks", {
            token,
            headers: { "Content-Type": "application/vnd.api+json" },
            body: json,
          })
        ).response.status,
      ).toBe(201);
    });

    it("a body over 256 KiB answers 413", async () => {
      const { token } = await newProject();
      const json = { url: receiverUrl(), events: [DELIVERED], description: "x".repeat(300 * 1024) };
      expectProblem(await send("POST", "/api/v1/webhooks", { token, json }), 413, "payload_too_large");
      expectProblem(
        await send("POST", "/api/v1/events", {
          token,
          json: { type: DELIVERED, data: { ...messageData(), reason: "y".repeat(300 * 1024) } },
        }),
        413,
        "payload_too_large",
      );
      const after = await send("POST", "/api/v1/webhooks", {
        token,
        json: { url: receiverUrl(), events: [SENT] },
      });
      expect(after.response.status).toBe(201);
    });

    it("POST /webhooks schema violations answer 422 with every path", async () => {
      const { token } = await newProject();
      const post = (json: unknown) => send("POST", "/api/v1/webhooks", { token, json });
      expectInvalid(await post({}), ["body.url", "body.events"]);
      expectInvalid(await post([]), ["body"]);
      expectInvalid(await post({ url: 42, events: "message.sent" }), ["body.url", "body.events"]);
      const unknown = expectInvalid(await post({ url: receiverUrl(), events: [DELIVERED, "message.lost"] }), [
        "body.events.1",
      ]);
      expect(unknown[0]!.message).toContain('"message.lost"');
      const dup = expectInvalid(await post({ url: receiverUrl(), events: [SENT, DELIVERED, SENT] }), [
        "body.events.2",
      ]);
      expect(dup[0]!.message).toContain("duplicate");
      expectInvalid(await post({ url: receiverUrl(), events: [] }), ["body.events"]);
      const http = expectInvalid(await post({ url: "http://receiver.example/hook", events: [SENT] }), [
        "body.url",
      ]);
      expect(http[0]!.message).toContain("https://");
      expectInvalid(await post({ url: "https://user:pass@receiver.example/hook", events: [SENT] }), [
        "body.url",
      ]);
      expectInvalid(await post({ url: `https://receiver.example/${"a".repeat(2048)}`, events: [SENT] }), [
        "body.url",
      ]);
      expectInvalid(await post({ url: "not a url", events: [SENT] }), ["body.url"]);
      expectInvalid(await post({ url: receiverUrl(), events: [SENT], description: 7 }), ["body.description"]);
    });

    it("PATCH /webhooks/{id} needs at least one valid field", async () => {
      const { token, api } = await newProject();
      const w = await createWebhook(api);
      const patch = (json: unknown) => send("PATCH", `/api/v1/webhooks/${w.id}`, { token, json });
      expectInvalid(await patch({}), ["body"]);
      expectInvalid(await patch({ enabled: "no" }), ["body.enabled"]);
      expectInvalid(await patch({ events: [] }), ["body.events"]);
      expectInvalid(await patch({ url: "http://receiver.example/" }), ["body.url"]);
      const missing = await send("PATCH", `/api/v1/webhooks/${w.id}`, { token });
      expectInvalid(missing, ["body"]);
    });

    it("malformed and unknown ids answer 404 not_found", async () => {
      const { api } = await newProject();
      for (const id of ["nope", "123", `${crypto.randomUUID()}x`, crypto.randomUUID()]) {
        const p = { path: { id } };
        const d = { path: { delivery_id: id } };
        const calls = [
          api.GET("/api/v1/webhooks/{id}", { params: p }),
          api.PATCH("/api/v1/webhooks/{id}", { params: p, body: { enabled: true } }),
          api.POST("/api/v1/webhooks/{id}/rotate", { params: p }),
          api.POST("/api/v1/webhooks/{id}/enable", { params: p }),
          api.DELETE("/api/v1/webhooks/{id}", { params: p }),
          api.GET("/api/v1/webhooks/{id}/deliveries", { params: p }),
          api.GET("/api/v1/webhooks/deliveries/{delivery_id}", { params: d }),
          api.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", { params: d }),
        ];
        for (const res of await Promise.all(calls)) expectProblem(res, 404, "not_found");
      }
      for (const id of ["nope", "evt_XYZ", "evt_0123", `evt_${"0".repeat(32)}`]) {
        expectProblem(await api.GET("/api/v1/events/{id}", { params: { path: { id } } }), 404, "not_found");
      }
    });

    it("bad list parameters answer 422 naming the parameter", async () => {
      const { api, token } = await newProject();
      const w = await createWebhook(api);
      for (const limit of ["0", "101", "abc", "2.5"]) {
        expectInvalid(await send("GET", `/api/v1/webhooks?limit=${limit}`, { token }), ["query.limit"]);
        expectInvalid(await send("GET", `/api/v1/webhooks/${w.id}/deliveries?limit=${limit}`, { token }), [
          "query.limit",
        ]);
      }
      const junkCursor = btoa(JSON.stringify({ x: 1 })).replace(/=+$/, "");
      for (const cursor of ["!!!", "bm90IGpzb24", junkCursor]) {
        expectInvalid(await send("GET", `/api/v1/webhooks?cursor=${cursor}`, { token }), ["query.cursor"]);
        expectInvalid(await send("GET", `/api/v1/webhooks/${w.id}/deliveries?cursor=${cursor}`, { token }), [
          "query.cursor",
        ]);
      }
      expectInvalid(await send("GET", "/api/v1/webhooks?enabled=yes", { token }), ["query.enabled"]);
      expectInvalid(await send("GET", "/api/v1/webhooks?event=message.lost", { token }), ["query.event"]);
      const q = (s: string) => send("GET", `/api/v1/webhooks/${w.id}/deliveries?${s}`, { token });
      expectInvalid(await q("status=lost"), ["query.status"]);
      expectInvalid(await q("event_type=nope"), ["query.event_type"]);
      expectInvalid(await q("event_id=evt_1"), ["query.event_id"]);
      expectInvalid(await q("since=yesterday&until=2026-13-01"), ["query.since", "query.until"]);
    });

    it("unknown routes answer 404; under /api/v1 authentication comes first", async () => {
      const { token } = await newProject();
      expectProblem(await send("GET", "/api/v1/nothing-here", { token }), 404, "not_found");
      expectProblem(await send("GET", "/api/v1/nothing-here"), 401, "unauthorized");
      expectProblem(await send("GET", "/nothing-here"), 404, "not_found");
      expectProblem(await send("PUT", "/api/v1/webhooks", { token, json: {} }), 404, "not_found");
      expectProblem(await send("GET", "/api/v2/webhooks", { token }), 404, "not_found");
    });

    it("unwrap() throws a typed HeraldApiError", async () => {
      const { api } = await newProject();
      const err = await unwrap(
        api.GET("/api/v1/webhooks/{id}", { params: { path: { id: crypto.randomUUID() } } }),
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HeraldApiError);
      expect(err).toMatchObject({ status: 404, code: "not_found", title: "Not Found", errors: [] });
      const invalid = await unwrap(api.GET("/api/v1/webhooks", { params: { query: { limit: 0 } } })).catch(
        (e: unknown) => e as HeraldApiError,
      );
      expect(invalid).toMatchObject({ status: 422, code: "validation_failed" });
      expect((invalid as HeraldApiError).errors.map((e) => e.path)).toEqual(["query.limit"]);
    });
  });
}
