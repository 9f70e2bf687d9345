import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, errorResponses } from "../../errors.ts";
import { presentDelivery } from "./present.ts";
import { DeliveryIdParams, DeliverySchema } from "./schema.ts";

export const route = createRoute({
  method: "post",
  path: "/webhooks/deliveries/{delivery_id}/retry",
  operationId: "retryDelivery",
  tags: ["Deliveries"],
  summary: "Replay a delivery by hand",
  description:
    "Queues a new manual attempt of the same event (same id, fresh timestamp and signature). A manual attempt that fails is not retried automatically. On a disabled endpoint: 409 `endpoint_disabled`.",
  security: BEARER_AUTH,
  request: { params: DeliveryIdParams },
  responses: {
    202: {
      description: "The new delivery record (`trigger: manual`, `status: pending`).",
      content: { "application/json": { schema: DeliverySchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, 404, 409),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const delivery = await deps.deliveries.retry(c.var.scope, c.req.valid("param").delivery_id);
    return c.json(presentDelivery(delivery), 202);
  });
}
