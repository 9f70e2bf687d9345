import { createRoute } from "@hono/zod-openapi";
import { notFound } from "../../../../domain/errors.ts";
import { isoMillis } from "../../../../domain/time.ts";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses } from "../../errors.ts";
import { jsonBody } from "../../middleware/json-body.ts";
import { withIssuePrefix } from "../../problem.ts";
import { CreatePortalSessionSchema, PortalSessionSchema } from "./schema.ts";

export const route = createRoute({
  method: "post",
  path: "/portal-sessions",
  operationId: "createPortalSession",
  tags: ["Portal"],
  summary: "Create a customer portal link",
  description:
    "A signed URL that opens a restricted console for the token's project (optionally only some endpoints): manage those endpoints, see and retry their deliveries, rotate their secret. It can be embedded in an iframe of the origins in HERALD_PORTAL_FRAME_ANCESTORS.",
  security: BEARER_AUTH,
  middleware: jsonBody,
  request: {
    body: { required: false, content: { "application/json": { schema: CreatePortalSessionSchema } } },
  },
  responses: {
    201: {
      description: "The portal link (shown once).",
      content: { "application/json": { schema: PortalSessionSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS, 404),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    if (!deps.console) throw notFound("The customer portal");
    const body = c.req.valid("json");
    const { secret, record } = await deps.console.use
      .createPortalLink(c.var.scope, { expiresInSeconds: body.expires_in, webhookIds: body.webhook_ids })
      .catch((e: unknown) => Promise.reject(withIssuePrefix(e, "body")));
    return c.json(
      {
        id: record.id,
        url: `${new URL(c.req.url).origin}/portal/enter?code=${secret}`,
        expires_at: isoMillis(record.expiresAt),
        webhook_ids: record.webhookIds,
      },
      201,
    );
  });
}
