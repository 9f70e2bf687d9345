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
