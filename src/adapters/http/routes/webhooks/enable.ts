import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, errorResponses } from "../../errors.ts";
import { presentOneWebhook } from "./present.ts";
import { WebhookIdParams, WebhookSchema } from "./schema.ts";

export const route = createRoute({
  method: "post",
  path: "/webhooks/{id}/enable",
  operationId: "enableWebhook",
  tags: ["Webhooks"],
  summary: "Enable an endpoint",
  description: "Idempotent. Clears the failure streak; skipped deliveries can then be retried by hand.",
  security: BEARER_AUTH,
  request: { params: WebhookIdParams },
  responses: {
    200: {
      description: "The endpoint, enabled.",
      content: { "application/json": { schema: WebhookSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, 404),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const endpoint = await deps.endpoints.enable(c.var.scope, c.req.valid("param").id);
    return c.json(await presentOneWebhook(deps.endpoints, endpoint), 200);
  });
}
