import { describe, expect, it } from "vitest";
import { unwrap } from "../../../../../clients/typescript/client.ts";
import type { components } from "../../../../../clients/typescript/schema.d.ts";
import {
  DELIVERED,
  expectInvalid,
  expectWebhook,
  expectWebhookWithSecret,
  receiverUrl,
  type Suite,
} from "./context.ts";

/** Values that must never come back in any answer. */
export const HEADER_SECRET = "rk_live_4f9a1c2e-never-shown";
const MASK = "********";

/** The API suite's cases for an endpoint's custom headers and signature scheme (issue 11, items 4 and 5). */
export function webhookControlCases(s: Suite): void {
  const { newProject, send } = s;
  describe("webhooks: custom headers and signature scheme", () => {
    it("POST /webhooks takes headers and signature_scheme; every answer masks the values", async () => {
      const { api, token } = await newProject();
      const created = await api.POST("/api/v1/webhooks", {
        body: {
          url: receiverUrl(),
          events: [DELIVERED],
          headers: { Authorization: `Bearer ${HEADER_SECRET}`, "X-Route": "eu-1" },
          signature_scheme: "standard-webhooks",
        },
      });
      expect(created.response.status).toBe(201);
      const w = expectWebhookWithSecret(created.data);
      expect(w.signature_scheme).toBe("standard-webhooks");
      expect(w.headers).toEqual({ Authorization: MASK, "X-Route": MASK });
      const path = { id: w.id };
      const got = expectWebhook(await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path } })));
      expect(got.headers).toEqual({ Authorization: MASK, "X-Route": MASK });
      expect(got.signature_scheme).toBe("standard-webhooks");
      const listed = await send("GET", "/api/v1/webhooks", { token });
      const rotated = await send("POST", `/api/v1/webhooks/${w.id}/rotate`, { token, json: {} });
      const enabled = await send("POST", `/api/v1/webhooks/${w.id}/enable`, { token });
      for (const res of [created.response, listed.response, rotated.response, enabled.response]) {
        expect(res.ok).toBe(true);
      }
      for (const text of [JSON.stringify(created.data), listed.text, rotated.text, enabled.text]) {
        expect(text).not.toContain(HEADER_SECRET);
        expect(text).not.toContain("eu-1");
      }
      expect(JSON.parse(listed.text).data[0].headers).toEqual({ Authorization: MASK, "X-Route": MASK });
    });

    it("defaults to herald-v1 and no headers", async () => {
      const { api } = await newProject();
      const w = await unwrap(
        api.POST("/api/v1/webhooks", { body: { url: receiverUrl(), events: [DELIVERED] } }),
      );
      expect(w.signature_scheme).toBe("herald-v1");
      expect(w.headers).toEqual({});
    });

    it("PATCH /webhooks/{id} merges headers (set, replace in any case, remove; null clears) and switches the scheme", async () => {
      const { api } = await newProject();
      const w = await unwrap(
        api.POST("/api/v1/webhooks", {
          body: { url: receiverUrl(), events: [DELIVERED], headers: { "X-A": "1", "X-B": "2", "X-C": "3" } },
        }),
      );
      const path = { id: w.id };
      const patch = (body: components["schemas"]["UpdateWebhookRequest"]) =>
        unwrap(api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body }));
      const merged = expectWebhook(
        await patch({ headers: { "x-a": HEADER_SECRET, "X-B": null, "X-D": "4" } }),
      );
      expect(merged.headers).toEqual({ "x-a": MASK, "X-C": MASK, "X-D": MASK });
      expect(merged.signature_scheme).toBe("herald-v1");
      const other = await patch({ description: "kept", signature_scheme: "standard-webhooks" });
      expect(other.headers).toEqual({ "x-a": MASK, "X-C": MASK, "X-D": MASK });
      expect(other.signature_scheme).toBe("standard-webhooks");
      expect((await patch({ headers: {} })).headers).toEqual({ "x-a": MASK, "X-C": MASK, "X-D": MASK });
      expect((await patch({ headers: null })).headers).toEqual({});
      expect((await patch({ signature_scheme: "herald-v1" })).signature_scheme).toBe("herald-v1");
    });

    it("refuses bad header names and values with 422 naming each, never quoting a value, and changes nothing", async () => {
      const { api, token } = await newProject();
      const url = receiverUrl();
      const res = await send("POST", "/api/v1/webhooks", {
        token,
        json: {
          url,
          events: [DELIVERED],
          headers: {
            "X-Webhook-Signature": "x",
            "webhook-id": "x",
            Host: "evil.example",
            "Content-Length": "1",
            Connection: "close",
            "Transfer-Encoding": "chunked",
            "Proxy-Authorization": "x",
            "User-Agent": "x",
            "Bad Name": "x",
            "X-Crlf": `${HEADER_SECRET}\r\nX-Injected: 1`,
            "X-Empty": "",
            "X-Mask": MASK,
            "X-Number": 7,
          },
          signature_scheme: "herald-v2",
        },
      });
      const issues = expectInvalid(res, ["body.headers.X-Number", "body.signature_scheme"]);
      expect(issues.find((i) => i.path === "body.signature_scheme")!.message).toBe(
        'signature_scheme must be one of "herald-v1", "standard-webhooks", "standard-webhooks-ed25519"',
      );
      // Types first (the schema), then the header rules (the domain): each with its path.
      const rules = await send("POST", "/api/v1/webhooks", {
        token,
        json: {
          url,
          events: [DELIVERED],
          headers: {
            "X-Webhook-Signature": "x",
            "webhook-id": "x",
            Host: "evil.example",
            "Content-Length": "1",
            Connection: "close",
            "Transfer-Encoding": "chunked",
            "Proxy-Authorization": "x",
            "User-Agent": "x",
            "Bad Name": "x",
            "X-Crlf": `${HEADER_SECRET}\r\nX-Injected: 1`,
            "X-Empty": "",
            "X-Mask": MASK,
          },
        },
      });
      const ruleIssues = expectInvalid(rules, [
        "body.headers.X-Webhook-Signature",
        "body.headers.webhook-id",
        "body.headers.Host",
        "body.headers.Content-Length",
        "body.headers.Connection",
        "body.headers.Transfer-Encoding",
        "body.headers.Proxy-Authorization",
        "body.headers.User-Agent",
        "body.headers.Bad Name",
        "body.headers.X-Crlf",
        "body.headers.X-Empty",
        "body.headers.X-Mask",
      ]);
      expect(ruleIssues.find((i) => i.path === "body.headers.Host")!.message).toMatch(
        /^headers\.Host is set by Herald or reserved by HTTP/,
      );
      expect(ruleIssues.find((i) => i.path === "body.headers.X-Crlf")!.message).toBe(
        "headers.X-Crlf must be printable ASCII, with no line break and no space at either end",
      );
      expect(rules.text).not.toContain(HEADER_SECRET);
      // A bad URL and a bad header: both named in one answer.
      const both = await send("POST", "/api/v1/webhooks", {
        token,
        json: { url: "ftp://x.example", events: [DELIVERED], headers: { Host: "x" } },
      });
      expectInvalid(both, ["body.url", "body.headers.Host"]);
      expect(rules.text).not.toContain("evil.example");
      expect((await unwrap(api.GET("/api/v1/webhooks"))).data).toEqual([]);
    });

    it("refuses a header named __proto__ instead of dropping it", async () => {
      const { token } = await newProject();
      const res = await send("POST", "/api/v1/webhooks", {
        token,
        headers: { "Content-Type": "application/json" },
        body: `{"url":"${receiverUrl()}","events":["${DELIVERED}"],"headers":{"__proto__":"x","X-A":"1"}}`,
      });
      expectInvalid(res, ["body.headers.__proto__"]);
    });

    it("refuses more than 20 headers, more than 8192 characters in all, and names repeated in another case", async () => {
      const { api, token } = await newProject();
      const w = await unwrap(
        api.POST("/api/v1/webhooks", {
          body: { url: receiverUrl(), events: [DELIVERED], headers: { "X-1": "a" } },
        }),
      );
      const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`X-N${i}`, "v"]));
      // 20 new ones plus the one kept: 21 after the merge.
      expectInvalid(await send("PATCH", `/api/v1/webhooks/${w.id}`, { token, json: { headers: many } }), [
        "body.headers",
      ]);
      const big = { "X-A": "a".repeat(4096), "X-B": "b".repeat(4096) };
      expectInvalid(await send("PATCH", `/api/v1/webhooks/${w.id}`, { token, json: { headers: big } }), [
        "body.headers",
      ]);
      const dup = await send("PATCH", `/api/v1/webhooks/${w.id}`, {
        token,
        json: { headers: { "X-Dup": "1", "x-dup": "2" } },
      });
      expectInvalid(dup, ["body.headers.x-dup"]);
      const still = await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } }));
      expect(still.headers).toEqual({ "X-1": MASK });
      expect(still.updated_at).toBe(w.updated_at);
    });
  });
}
