import { createRoute, z } from "@hono/zod-openapi";
import { isoMillis } from "../../../../domain/time.ts";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses } from "../../errors.ts";
import { jsonBody } from "../../middleware/json-body.ts";
import { withIssuePrefix } from "../../problem.ts";
import { timestamp } from "../shared.ts";
import { WebhookIdParams } from "./schema.ts";

const instant = (description: string, example: string) =>
  z.iso.datetime({ offset: true }).openapi({ example, description });

// The examples make a window the API takes (until after since, at most 14 days apart).
export const RecoverWebhookSchema = z
  .strictObject({
    since: instant(
      "Start of the window (inclusive), ISO 8601: before `until`, and at most 14 days before it.",
      "2026-11-21T09:00:00Z",
    ),
    until: instant(
      "End of the window (exclusive), ISO 8601; defaults to now.",
      "2026-11-21T10:00:00Z",
    ).optional(),
  })
  .openapi("RecoverWebhookRequest");

export const RecoverySchema = z
  .object({
    queued: z.number().int().min(0).openapi({ description: "How many manual deliveries were queued." }),
    since: timestamp("Start of the window, as applied."),
    until: timestamp("End of the window, as applied."),
  })
  .openapi("Recovery");

export const route = createRoute({
  method: "post",
  path: "/webhooks/{id}/recover",
  operationId: "recoverWebhook",
  tags: ["Webhooks"],
  summary: "Recover after an outage",
  description:
    "Queues one new manual delivery for every event created in [since, until) whose latest delivery to this endpoint is `failed` or `skipped`. Events whose latest attempt is still pending or succeeded are left alone. The window may be at most 14 days. On a disabled endpoint: 409 `endpoint_disabled` (enable it first).",
  security: BEARER_AUTH,
  middleware: jsonBody,
  request: {
    params: WebhookIdParams,
    body: { required: true, content: { "application/json": { schema: RecoverWebhookSchema } } },
  },
  responses: {
    202: {
      description: "Accepted: how many deliveries were queued, and the window applied.",
      content: { "application/json": { schema: RecoverySchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS, 404, 409),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const recovery = await deps.tools
      .recover(
        c.var.scope,
        c.req.valid("param").id,
        new Date(body.since),
        body.until === undefined ? undefined : new Date(body.until),
      )
      .catch((e: unknown) => Promise.reject(withIssuePrefix(e, "body")));
    return c.json(
      { queued: recovery.queued, since: isoMillis(recovery.since), until: isoMillis(recovery.until) },
      202,
    );
  });
}
