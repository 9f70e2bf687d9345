import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses } from "../../errors.ts";
import { jsonBody } from "../../middleware/json-body.ts";
import { withIssuePrefix } from "../../problem.ts";
import { destinationOf } from "./destination-json.ts";
import { clientCertificateOf, presentOneWebhook, rateLimitOf } from "./present.ts";
import { CreateWebhookSchema, WebhookWithSecretSchema } from "./schema.ts";

export const route = createRoute({
  method: "post",
  path: "/webhooks",
  operationId: "createWebhook",
  tags: ["Webhooks"],
  summary: "Register an endpoint",
  description:
    "Registers an endpoint for the listed event types: an HTTPS URL, or (`kind`) a Kafka topic, a RabbitMQ exchange or an Amazon SQS queue, with optional custom headers and a signature scheme. A broker destination's credentials are sealed and never shown (********). The secret is shown only in this answer (for `standard-webhooks-ed25519`, `secret` and `public_key` are the public key; the private key is never shown); custom header values are never shown (masked).",
  security: BEARER_AUTH,
  middleware: jsonBody,
  request: {
    body: { required: true, content: { "application/json": { schema: CreateWebhookSchema } } },
  },
  responses: {
    201: {
      description: "The endpoint, with its signing secret.",
      headers: { Location: { description: "The endpoint's URL.", schema: { type: "string" } } },
      content: { "application/json": { schema: WebhookWithSecretSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const https = body.kind === undefined || body.kind === "https" ? body : null;
    const { endpoint, secret } = await deps.endpoints
      .create(c.var.scope, {
        url: https?.url,
        events: body.events,
        description: body.description,
        headers: body.headers,
        filter: body.filter,
        ordering: body.ordering,
        signatureScheme: body.signature_scheme,
        rateLimit: rateLimitOf(body.rate_limit),
        clientCertificate: clientCertificateOf(https?.client_certificate),
        destination: destinationOf(body),
      })
      .catch((e: unknown) => Promise.reject(withIssuePrefix(e, "body")));
    c.header("Location", `/api/v1/webhooks/${endpoint.id}`);
    return c.json({ ...(await presentOneWebhook(deps.endpoints, endpoint)), secret }, 201);
  });
}
