import { createRoute } from "@hono/zod-openapi";
import { DomainError } from "../../../../domain/errors.ts";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { errorResponses } from "../../errors.ts";
import { HealthSchema } from "./schema.ts";

export const route = createRoute({
  method: "get",
  path: "/healthz",
  operationId: "getHealth",
  tags: ["Operations"],
  // Declared open, so the document says so rather than leaving it unsaid.
  security: [],
  summary: "Liveness",
  description:
    "200 while the process can do its work, including while the database is down (that is /readyz's 503: " +
    "restarting would not help). 503 when the process's own database client is wedged: it has failed " +
    "every command for a minute while new connections to the same database succeed, so only a restart " +
    "helps. No authentication.",
  responses: {
    200: { description: "The process is up.", content: { "application/json": { schema: HealthSchema } } },
    ...errorResponses(503),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, (c) => {
    const wedged = deps.wedged?.() ?? null;
    if (wedged) {
      c.var.logger.error("liveness check failed: restart this process", { reason: wedged });
      throw new DomainError("unavailable", `The database client of this process is wedged: ${wedged}.`);
    }
    return c.json({ status: "ok" as const }, 200);
  });
}
