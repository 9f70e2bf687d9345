import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, errorResponses } from "../../errors.ts";
import { ErasureIdParams, ErasureSchema, presentErasure } from "./schema.ts";

export const route = createRoute({
  method: "get",
  path: "/erasures/{id}",
  operationId: "getErasure",
  tags: ["Privacy"],
  summary: "Get an erasure",
  description: "An erasure of the project and what it removed (kept as long as the project's retention).",
  security: BEARER_AUTH,
  request: { params: ErasureIdParams },
  responses: {
    200: { description: "The erasure.", content: { "application/json": { schema: ErasureSchema } } },
    ...errorResponses(...AUTHENTICATED_ERRORS, 404),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const record = await deps.erasures.get(c.var.scope, c.req.valid("param").id.toLowerCase());
    return c.json(presentErasure(record), 200);
  });
}
