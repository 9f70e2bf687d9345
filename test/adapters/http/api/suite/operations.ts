import { describe, expect, it } from "vitest";
import { expectProblem, type Suite, UUID } from "./context.ts";

/** The API suite's operations cases. */
export function operationCases(s: Suite): void {
  const { send } = s;
  describe("operations", () => {
    it("GET /healthz and GET /readyz answer 200 without a token", async () => {
      for (const path of ["/healthz", "/readyz"]) {
        const res = await send("GET", path);
        expect(res.response.status).toBe(200);
        expect(res.error).toEqual({ status: "ok" });
      }
    });

    it("GET /metrics answers the Prometheus text format", async () => {
      const res = await send("GET", "/metrics");
      expect(res.response.status).toBe(200);
      expect(res.response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(res.text).toMatch(/^# (HELP|TYPE) /m);
    });

    it("GET /openapi.json answers the OpenAPI 3.1 document; GET /docs the Scalar reference", async () => {
      const doc = await send("GET", "/openapi.json");
      expect(doc.response.status).toBe(200);
      const body = doc.error as { openapi: string; info: { title: string }; paths: Record<string, unknown> };
      expect(body.openapi).toBe("3.1.0");
      expect(body.info.title).toBe("Herald");
      expect(Object.keys(body.paths)).toEqual(
        expect.arrayContaining([
          "/api/v1/webhooks",
          "/api/v1/webhooks/{id}",
          "/api/v1/webhooks/{id}/rotate",
          "/api/v1/webhooks/{id}/enable",
          "/api/v1/webhooks/{id}/test",
          "/api/v1/webhooks/{id}/filter-test",
          "/api/v1/webhooks/{id}/recover",
          "/api/v1/webhooks/{id}/deliveries",
          "/api/v1/webhooks/deliveries/{delivery_id}",
          "/api/v1/webhooks/deliveries/{delivery_id}/retry",
          "/api/v1/events",
          "/api/v1/events/{id}",
        ]),
      );
      const docs = await send("GET", "/docs");
      expect(docs.response.status).toBe(200);
      expect(docs.response.headers.get("content-type")).toMatch(/^text\/html/);
      expect(docs.text).toContain("/openapi.json");
    });

    it("GET /docs works offline: every URL it references is same-origin, and its pinned script is served", async () => {
      const docs = await send("GET", "/docs");
      expect(docs.response.status).toBe(200);
      const html = docs.text;
      // Every src/href attribute, url(...) and @import, and any absolute or protocol-relative URL at all.
      const refs = [
        ...[...html.matchAll(/\b(?:src|href)\s*=\s*["']?([^"'\s>]+)/gi)].map((m) => m[1]!),
        ...[...html.matchAll(/url\(\s*["']?([^"')]+)/gi)].map((m) => m[1]!),
        ...[...html.matchAll(/@import\s+["']([^"']+)/gi)].map((m) => m[1]!),
      ];
      expect(html).not.toMatch(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
      expect(html).not.toMatch(/cdn\.|jsdelivr|unpkg|fonts\.scalar/i);
      const scripts = [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/gi)].map((m) => m[1]!);
      expect(scripts).toEqual([expect.stringMatching(/^\/docs\/api-reference-\d+\.\d+\.\d+\.js$/)]);
      for (const ref of refs) expect(ref, ref).toMatch(/^\/(?!\/)/);
      expect(html).toContain('"withDefaultFonts": false');

      const script = await send("GET", scripts[0]!);
      expect(script.response.status).toBe(200);
      expect(script.response.headers.get("content-type")).toMatch(/^(text|application)\/javascript/);
      expect(script.response.headers.get("cache-control")).toContain("immutable");
      expect(script.text.length).toBeGreaterThan(1_000_000);
      expect(script.text).toContain("createApiReference");
      // The version in the path is the installed one; any other answers 404.
      expectProblem(await send("GET", "/docs/api-reference-0.0.0.js"), 404, "not_found");
    });

    it("echoes a sane X-Request-Id and replaces an unsafe one", async () => {
      const given = await send("GET", "/healthz", { headers: { "X-Request-Id": "trace-42.a:b" } });
      expect(given.response.headers.get("x-request-id")).toBe("trace-42.a:b");
      const made = await send("GET", "/healthz", { headers: { "X-Request-Id": "has spaces; and <html>" } });
      expect(made.response.headers.get("x-request-id")).toMatch(UUID);
      const problem = await send("GET", "/nowhere", { headers: { "X-Request-Id": "req-7" } });
      expect(expectProblem(problem, 404, "not_found").request_id).toBe("req-7");
    });
  });
}
