import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses } from "../../errors.ts";
import { jsonBody } from "../../middleware/json-body.ts";
import { presentOneWebhook } from "./present.ts";
import { RotateSecretSchema, WebhookIdParams, WebhookWithSecretSchema } from "./schema.ts";

export const route = createRoute({
  method: "post",
  path: "/webhooks/{id}/rotate",
  operationId: "rotateWebhookSecret",
  tags: ["Webhooks"],
  summary: "Rotate the signing secret",
  description:
    "Issues a new secret (for a `standard-webhooks-ed25519` endpoint, a new key pair: the answer's `public_key` is the new one). During the grace period every delivery carries two signatures: the new one, then the old.",
  security: BEARER_AUTH,
  middleware: jsonBody,
  request: {
    params: WebhookIdParams,
    body: { required: false, content: { "application/json": { schema: RotateSecretSchema } } },
  },
  responses: {
    200: {
      description: "The endpoint, with its new secret (HMAC schemes) or public key.",
      content: { "application/json": { schema: WebhookWithSecretSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS, 404),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    // An absent body is validated as {} by zod-openapi, so the default applies.
    const { grace_period_seconds = 0 } = c.req.valid("json");
    const { endpoint, secret } = await deps.endpoints.rotate(
      c.var.scope,
      c.req.valid("param").id,
      grace_period_seconds,
    );
    return c.json({ ...(await presentOneWebhook(deps.endpoints, endpoint)), secret }, 200);
  });
}
