import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, errorResponses } from "../../errors.ts";
import { WebhookIdParams } from "./schema.ts";

export const route = createRoute({
  method: "delete",
  path: "/webhooks/{id}",
  operationId: "deleteWebhook",
  tags: ["Webhooks"],
  summary: "Remove an endpoint",
  description: "Its pending deliveries are cancelled and nothing more is sent to it.",
  security: BEARER_AUTH,
  request: { params: WebhookIdParams },
  responses: {
    204: { description: "Removed." },
    ...errorResponses(...AUTHENTICATED_ERRORS, 404),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    await deps.endpoints.remove(c.var.scope, c.req.valid("param").id);
    return c.body(null, 204);
  });
}
