import { createRoute } from "@hono/zod-openapi";
import { notFound } from "../../../../domain/errors.ts";
import { listenUrl } from "../../../../domain/listen-url.ts";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses } from "../../errors.ts";
import { jsonBody } from "../../middleware/json-body.ts";
import { withIssuePrefix } from "../../problem.ts";
import { presentOneWebhook } from "../webhooks/present.ts";
import { WebhookWithSecretSchema } from "../webhooks/schema.ts";
import { CreateListenSessionSchema } from "./schema.ts";

export const route = createRoute({
  method: "post",
  path: "/listen-sessions",
  operationId: "createListenSession",
  tags: ["Listen sessions"],
  summary: "Create a listen session",
  description:
    "Registers an endpoint whose deliveries go to a `herald listen` command over its own connection to Herald (`url` is `listen://...`), not to an address: open its stream with `GET /listen-sessions/{id}/stream` and answer each delivery. Deliveries are signed, retried and recorded like any other. The secret is shown only in this answer.",
  security: BEARER_AUTH,
  middleware: jsonBody,
  request: {
    body: { required: true, content: { "application/json": { schema: CreateListenSessionSchema } } },
  },
  responses: {
    201: {
      description: "The session's endpoint, with its signing secret.",
      content: { "application/json": { schema: WebhookWithSecretSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS, 404),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    if (!deps.listen) throw notFound("Listen sessions");
    const body = c.req.valid("json");
    const { endpoint, secret } = await deps.endpoints
      .create(
        c.var.scope,
        {
          url: listenUrl(crypto.randomUUID()),
          events: body.events,
          description: body.description ?? "herald listen",
        },
        true,
      )
      .catch((e: unknown) => Promise.reject(withIssuePrefix(e, "body")));
    return c.json({ ...(await presentOneWebhook(deps.endpoints, endpoint)), secret }, 201);
  });
}
