import { createRoute } from "@hono/zod-openapi";
import type { HttpApp } from "../../env.ts";
import { HealthSchema } from "./schema.ts";

export const route = createRoute({
  method: "get",
  path: "/healthz",
  operationId: "getHealth",
  tags: ["Operations"],
  summary: "Liveness",
  description: "200 while the process is up. No authentication.",
  responses: {
    200: { description: "The process is up.", content: { "application/json": { schema: HealthSchema } } },
  },
});

export function register(app: HttpApp): void {
  app.openapi(route, (c) => c.json({ status: "ok" as const }, 200));
}
