import { createRoute } from "@hono/zod-openapi";
import { DomainError } from "../../../../domain/errors.ts";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { errorResponses } from "../../errors.ts";
import { recordingBehind } from "./recording-readiness.ts";
import { HealthSchema } from "./schema.ts";

export const route = createRoute({
  method: "get",
  path: "/readyz",
  operationId: "getReadiness",
  tags: ["Operations"],
  // Declared open, so the document says so rather than leaving it unsaid.
  security: [],
  summary: "Readiness",
  description:
    "200 when the database answers and delivery results are being recorded, 503 otherwise. No authentication.",
  responses: {
    200: { description: "Ready to serve.", content: { "application/json": { schema: HealthSchema } } },
    ...errorResponses(503),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    try {
      await deps.ping();
    } catch (error) {
      c.var.logger.warn("readiness check failed", { error });
      throw new DomainError("unavailable", "The database does not answer.");
    }
    const behind = recordingBehind(deps.recording?.() ?? null);
    if (behind !== null) throw new DomainError("unavailable", behind);
    return c.json({ status: "ok" as const }, 200);
  });
}
