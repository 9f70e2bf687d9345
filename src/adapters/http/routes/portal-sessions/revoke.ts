import { createRoute } from "@hono/zod-openapi";
import { notFound } from "../../../../domain/errors.ts";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, errorResponses } from "../../errors.ts";
import { PortalSessionIdParams } from "./schema.ts";

export const route = createRoute({
  method: "delete",
  path: "/portal-sessions/{id}",
  operationId: "revokePortalSession",
  tags: ["Portal"],
  summary: "Revoke a customer portal link",
  description: "The link stops working, and every browser that opened it is signed out at once.",
  security: BEARER_AUTH,
  request: { params: PortalSessionIdParams },
  responses: {
    204: { description: "Revoked." },
    ...errorResponses(...AUTHENTICATED_ERRORS, 404),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    if (!deps.console) throw notFound("The customer portal");
    await deps.console.use.revokePortalLink(c.var.scope, c.req.valid("param").id.toLowerCase());
    return c.body(null, 204);
  });
}
