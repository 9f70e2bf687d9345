import { createRoute, z } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses } from "../../errors.ts";
import { jsonBody } from "../../middleware/json-body.ts";
import { withIssuePrefix } from "../../problem.ts";
import { presentDelivery } from "../deliveries/present.ts";
import { DeliverySchema } from "../deliveries/schema.ts";
import { EventSchema } from "../events/schema.ts";
import { EventTypeSchema } from "../shared.ts";
import { WebhookIdParams } from "./schema.ts";

export const SendTestEventSchema = z
  .strictObject({
    type: EventTypeSchema.optional().openapi({
      description: "One of the endpoint's event types; defaults to the first it lists.",
      example: "message.delivered",
    }),
  })
  .openapi("SendTestEventRequest");

export const TestDeliverySchema = z
  .object({
    event: EventSchema,
    delivery: DeliverySchema,
  })
  .openapi("TestDelivery", { description: "The sample event and its first delivery record." });

export const route = createRoute({
  method: "post",
  path: "/webhooks/{id}/test",
  operationId: "sendTestEvent",
  tags: ["Webhooks"],
  summary: "Send a test event",
  description:
    "Publishes a sample event of one of the endpoint's subscribed types to this endpoint only. It is stored, signed, delivered and retried like any other event, and shows up in the endpoint's deliveries. On a disabled endpoint: 409 `endpoint_disabled`.",
  security: BEARER_AUTH,
  middleware: jsonBody,
  request: {
    params: WebhookIdParams,
    body: { required: false, content: { "application/json": { schema: SendTestEventSchema } } },
  },
  responses: {
    202: {
      description: "Accepted: the sample event and its delivery record (`status: pending`).",
      content: { "application/json": { schema: TestDeliverySchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS, 404, 409),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    // An absent body is validated as {}, so the endpoint's first type applies.
    const { type } = c.req.valid("json");
    const { event, delivery } = await deps.tools
      .sendTest(c.var.scope, c.req.valid("param").id, type)
      .catch((e: unknown) => Promise.reject(withIssuePrefix(e, "body")));
    return c.json({ event, delivery: presentDelivery(delivery) }, 202);
  });
}
