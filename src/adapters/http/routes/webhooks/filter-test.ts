import { createRoute, z } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses } from "../../errors.ts";
import { jsonBody } from "../../middleware/json-body.ts";
import { withIssuePrefix } from "../../problem.ts";
import { PublishEventSchema } from "../events/schema.ts";
import { EventFilterSchema } from "./fields.ts";
import { WebhookIdParams } from "./schema.ts";

export const FilterTestRequestSchema = z
  .strictObject({
    event: PublishEventSchema,
    filter: EventFilterSchema.nullable().optional(),
  })
  .openapi("FilterTestRequest");

export const FilterTestResultSchema = z
  .object({
    matches: z.boolean().openapi({
      description: "Whether the endpoint would get a delivery: its type subscribed and the filter matched.",
    }),
    subscribed: z.boolean().openapi({ description: "The event's type is one of the endpoint's." }),
    filter: EventFilterSchema.nullable(),
    reasons: z
      .array(
        z
          .object({
            path: z.string().openapi({
              example: "filter.data.status.$in",
              description: "The clause that failed, by its path in the filter (`filter.…`), or `event.type`.",
            }),
            message: z
              .string()
              .openapi({ example: 'data.status is "bounced"; expected one of ["delivered"]' }),
          })
          .openapi("FilterMismatch"),
      )
      .openapi({ description: "Why it does not match: every failed clause; empty when it matches." }),
  })
  .openapi("FilterTestResult");

export const route = createRoute({
  method: "post",
  path: "/webhooks/{id}/filter-test",
  operationId: "testWebhookFilter",
  tags: ["Webhooks"],
  summary: "Try a filter on an event",
  description:
    "Answers whether the endpoint would get a delivery for `event` (the body POST /events takes, validated the same way) under its filter, or under the candidate `filter` given instead (null: none), and if not, which clauses failed. `filter` in the answer is the filter tried. Nothing is stored or sent.",
  security: BEARER_AUTH,
  middleware: jsonBody,
  request: {
    params: WebhookIdParams,
    body: { required: true, content: { "application/json": { schema: FilterTestRequestSchema } } },
  },
  responses: {
    200: {
      description: "The verdict.",
      content: { "application/json": { schema: FilterTestResultSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS, 404),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const { event, filter } = c.req.valid("json");
    const result = await deps.tools
      .testFilter(c.var.scope, c.req.valid("param").id, {
        event: {
          type: event.type,
          data: event.data,
          resourceId: event.resource_id,
          occurredAt: event.occurred_at,
        },
        filter,
      })
      .catch((e: unknown) => Promise.reject(withIssuePrefix(e, "body")));
    return c.json(result, 200);
  });
}
