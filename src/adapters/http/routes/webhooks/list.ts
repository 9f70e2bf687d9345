import { createRoute } from "@hono/zod-openapi";
import { decodeCursor, encodeCursor } from "../../cursor.ts";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, errorResponses } from "../../errors.ts";
import { presentWebhooks } from "./present.ts";
import { ListWebhooksQuery, WebhookListSchema } from "./schema.ts";

export const route = createRoute({
  method: "get",
  path: "/webhooks",
  operationId: "listWebhooks",
  tags: ["Webhooks"],
  summary: "List endpoints",
  description: "Newest first. Secrets are never listed.",
  security: BEARER_AUTH,
  request: { query: ListWebhooksQuery },
  responses: {
    200: {
      description: "A page of endpoints.",
      content: { "application/json": { schema: WebhookListSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, 422),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const page = await deps.endpoints.list(
      c.var.scope,
      { enabled: q.enabled === undefined ? undefined : q.enabled === "true", event: q.event },
      { limit: q.limit, cursor: decodeCursor(q.cursor) },
    );
    return c.json(
      {
        data: await presentWebhooks(deps.endpoints, page.data),
        next_cursor: page.next ? encodeCursor(page.next) : null,
      },
      200,
    );
  });
}
