import { createRoute, z } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export const route = createRoute({
  method: "get",
  path: "/metrics",
  operationId: "getMetrics",
  tags: ["Operations"],
  // Declared open, so the document says so rather than leaving it unsaid.
  security: [],
  summary: "Prometheus metrics",
  description: "The Prometheus text exposition format 0.0.4. No authentication.",
  responses: {
    200: { description: "The metrics.", content: { "text/plain": { schema: z.string() } } },
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const text = await deps.metrics();
    return c.text(text, 200, { "Content-Type": PROMETHEUS_CONTENT_TYPE });
  });
}
