import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, errorResponses } from "../../errors.ts";
import { presentOneWebhook } from "./present.ts";
import { WebhookIdParams, WebhookSchema } from "./schema.ts";

export const route = createRoute({
  method: "get",
  path: "/webhooks/{id}",
  operationId: "getWebhook",
  tags: ["Webhooks"],
  summary: "Get an endpoint",
  security: BEARER_AUTH,
  request: { params: WebhookIdParams },
  responses: {
    200: {
      description: "The endpoint (no secret).",
      content: { "application/json": { schema: WebhookSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, 404),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const endpoint = await deps.endpoints.get(c.var.scope, c.req.valid("param").id);
    return c.json(await presentOneWebhook(deps.endpoints, endpoint), 200);
  });
}
