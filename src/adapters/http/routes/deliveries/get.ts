import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, errorResponses } from "../../errors.ts";
import { presentDelivery } from "./present.ts";
import { DeliveryIdParams, DeliverySchema } from "./schema.ts";

export const route = createRoute({
  method: "get",
  path: "/webhooks/deliveries/{delivery_id}",
  operationId: "getDelivery",
  tags: ["Deliveries"],
  summary: "Get a delivery attempt",
  security: BEARER_AUTH,
  request: { params: DeliveryIdParams },
  responses: {
    200: { description: "The delivery record.", content: { "application/json": { schema: DeliverySchema } } },
    ...errorResponses(...AUTHENTICATED_ERRORS, 404),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const delivery = await deps.deliveries.get(c.var.scope, c.req.valid("param").delivery_id);
    return c.json(presentDelivery(delivery), 200);
  });
}
