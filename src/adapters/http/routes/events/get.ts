import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, errorResponses } from "../../errors.ts";
import { EventIdParams, EventSchema } from "./schema.ts";

export const route = createRoute({
  method: "get",
  path: "/events/{id}",
  operationId: "getEvent",
  tags: ["Events"],
  summary: "Get an event",
  security: BEARER_AUTH,
  request: { params: EventIdParams },
  responses: {
    200: { description: "The envelope.", content: { "application/json": { schema: EventSchema } } },
    ...errorResponses(...AUTHENTICATED_ERRORS, 404),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    return c.json(await deps.events.get(c.var.scope, c.req.valid("param").id), 200);
  });
}
