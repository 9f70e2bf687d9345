import { createRoute } from "@hono/zod-openapi";
import { decodeCursor, encodeCursor } from "../../cursor.ts";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, errorResponses } from "../../errors.ts";
import { WebhookIdParams } from "../webhooks/schema.ts";
import { presentDelivery } from "./present.ts";
import { DeliveryListSchema, ListDeliveriesQuery } from "./schema.ts";

export const route = createRoute({
  method: "get",
  path: "/webhooks/{id}/deliveries",
  operationId: "listDeliveries",
  tags: ["Deliveries"],
  summary: "List an endpoint's delivery attempts",
  description: "Every attempt is its own record. Newest first.",
  security: BEARER_AUTH,
  request: { params: WebhookIdParams, query: ListDeliveriesQuery },
  responses: {
    200: {
      description: "A page of deliveries.",
      content: { "application/json": { schema: DeliveryListSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, 404, 422),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const page = await deps.deliveries.list(
      c.var.scope,
      c.req.valid("param").id,
      {
        status: q.status,
        eventType: q.event_type,
        eventId: q.event_id,
        since: q.since === undefined ? undefined : new Date(q.since),
        until: q.until === undefined ? undefined : new Date(q.until),
      },
      { limit: q.limit, cursor: decodeCursor(q.cursor) },
    );
    return c.json(
      { data: page.data.map(presentDelivery), next_cursor: page.next ? encodeCursor(page.next) : null },
      200,
    );
  });
}
