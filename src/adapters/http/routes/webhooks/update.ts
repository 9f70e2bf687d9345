import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses } from "../../errors.ts";
import { jsonBody } from "../../middleware/json-body.ts";
import { withIssuePrefix } from "../../problem.ts";
import { presentWebhook, rateLimitOf } from "./present.ts";
import { UpdateWebhookSchema, WebhookIdParams, WebhookSchema } from "./schema.ts";

export const route = createRoute({
  method: "patch",
  path: "/webhooks/{id}",
  operationId: "updateWebhook",
  tags: ["Webhooks"],
  summary: "Change an endpoint",
  description:
    "Changes the given fields. `enabled: false` disables it (`disabled_reason: manual`). `headers` is merged: a value sets a header, null removes one, headers not named stay. `filter` replaces the payload filter; `filter: null` removes it.",
  security: BEARER_AUTH,
  middleware: jsonBody,
  request: {
    params: WebhookIdParams,
    body: { required: true, content: { "application/json": { schema: UpdateWebhookSchema } } },
  },
  responses: {
    200: {
      description: "The endpoint as it now is.",
      content: { "application/json": { schema: WebhookSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS, 404),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const { signature_scheme, rate_limit, ...change } = c.req.valid("json");
    const endpoint = await deps.endpoints
      .update(c.var.scope, c.req.valid("param").id, {
        ...change,
        signatureScheme: signature_scheme,
        rateLimit: rateLimitOf(rate_limit),
      })
      .catch((e: unknown) => Promise.reject(withIssuePrefix(e, "body")));
    const held = (await deps.endpoints.held([endpoint])).get(endpoint.id);
    return c.json(presentWebhook(endpoint, held), 200);
  });
}
