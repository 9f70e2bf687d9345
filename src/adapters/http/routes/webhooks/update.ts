import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses } from "../../errors.ts";
import { jsonBody } from "../../middleware/json-body.ts";
import { withIssuePrefix } from "../../problem.ts";
import { destinationPatchOf } from "./destination-json.ts";
import { clientCertificateOf, presentOneWebhook, rateLimitOf } from "./present.ts";
import { ChangedWebhookSchema, UpdateWebhookSchema, WebhookIdParams } from "./schema.ts";

export const route = createRoute({
  method: "patch",
  path: "/webhooks/{id}",
  operationId: "updateWebhook",
  tags: ["Webhooks"],
  summary: "Change an endpoint",
  description:
    "Changes the given fields. `enabled: false` disables it (`disabled_reason: manual`). `headers` is merged: a value sets a header, null removes one, headers not named stay. `filter` replaces the payload filter; `filter: null` removes it. A broker endpoint's object (`kafka`, `rabbitmq`, `sqs`) is a JSON merge patch: credentials left out are kept; `kind` cannot change. Switching `signature_scheme` between an HMAC scheme (`herald-v1`, `standard-webhooks`) and `standard-webhooks-ed25519` issues a key of the new kind at once and drops the old keys (no grace period): the answer's `secret` is the new secret, or the new public key.",
  security: BEARER_AUTH,
  middleware: jsonBody,
  request: {
    params: WebhookIdParams,
    body: { required: true, content: { "application/json": { schema: UpdateWebhookSchema } } },
  },
  responses: {
    200: {
      description:
        "The endpoint as it now is; with `secret` when the change issued a key (a switch between an HMAC scheme and `standard-webhooks-ed25519`).",
      content: { "application/json": { schema: ChangedWebhookSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS, 404),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const { signature_scheme, rate_limit, client_certificate, kafka, rabbitmq, sqs, ...change } =
      c.req.valid("json");
    const { endpoint, secret } = await Promise.resolve()
      .then(() =>
        deps.endpoints.change(c.var.scope, c.req.valid("param").id, {
          ...change,
          signatureScheme: signature_scheme,
          rateLimit: rateLimitOf(rate_limit),
          clientCertificate: clientCertificateOf(client_certificate),
          destination: destinationPatchOf({ kafka, rabbitmq, sqs }),
        }),
      )
      .catch((e: unknown) => Promise.reject(withIssuePrefix(e, "body")));
    const json = await presentOneWebhook(deps.endpoints, endpoint);
    // A switch between key kinds issued a key: a new secret is shown now, once.
    return c.json(secret === null ? json : { ...json, secret }, 200);
  });
}
