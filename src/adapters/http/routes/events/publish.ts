import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses } from "../../errors.ts";
import { jsonBody } from "../../middleware/json-body.ts";
import { withIssuePrefix } from "../../problem.ts";
import { registerEventPayloads } from "./payloads.ts";
import { PublishEventSchema, PublishedEventSchema, PublishHeaders } from "./schema.ts";

export const route = createRoute({
  method: "post",
  path: "/events",
  operationId: "publishEvent",
  tags: ["Events"],
  summary: "Publish an event",
  description:
    "Validates the event, stores it durably and fans it out to every subscribed endpoint of the project (a disabled one gets a `skipped` delivery).",
  security: BEARER_AUTH,
  middleware: jsonBody,
  request: {
    headers: PublishHeaders,
    body: { required: true, content: { "application/json": { schema: PublishEventSchema } } },
  },
  responses: {
    202: {
      description: "Accepted. A replay of an Idempotency-Key answers the first response again.",
      headers: {
        "Idempotent-Replayed": {
          description: "`true` when this answer is a replay of an earlier request with the same key.",
          schema: { type: "string" },
        },
      },
      content: { "application/json": { schema: PublishedEventSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS, 409),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  // The per-type unions are named by reference only (see payloads.ts), so they are registered here.
  registerEventPayloads(app.openAPIRegistry);
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const result = await deps.events
      .publish(c.var.scope, {
        type: body.type,
        data: body.data,
        resourceId: body.resource_id,
        occurredAt: body.occurred_at,
        idempotencyKey: c.req.valid("header")["idempotency-key"],
        // Honoured when tracing is on (ADR 24); an invalid one starts a new trace, as the W3C says.
        traceparent: c.req.header("traceparent"),
      })
      .catch((e: unknown) => Promise.reject(withIssuePrefix(e, "body")));
    if (result.replayed) c.header("Idempotent-Replayed", "true");
    return c.json({ ...result.envelope, endpoints: result.endpoints }, 202);
  });
}
