import { z } from "@hono/zod-openapi";
import { DISABLED_REASONS, ORDERINGS } from "../../../../domain/endpoint.ts";
import { MAX_URL_LENGTH } from "../../../../domain/endpoint-url.ts";
import { EVENT_TYPES } from "../../../../domain/event-catalog.ts";
import { RATE_LIMIT_MAX } from "../../../../domain/rate-limit.ts";
import { EventTypeSchema, intRange, listOf, pageQuery, timestamp, uuidParam } from "../shared.ts";

const url = z.string().max(MAX_URL_LENGTH).openapi({
  format: "uri",
  example: "https://example.com/webhooks/herald",
  description: "Absolute https:// URL, at most 2048 characters, without user or password.",
});

const events = z
  .array(EventTypeSchema)
  .min(1, { error: "must list at least one event type" })
  .superRefine((types, ctx) => {
    const seen = new Set<string>();
    types.forEach((t, i) => {
      if (seen.has(t)) ctx.addIssue({ code: "custom", path: [i], message: `duplicate event type "${t}"` });
      seen.add(t);
    });
  })
  .openapi({ uniqueItems: true, description: "Event types to receive; no duplicates." });

const description = z.string().max(1024).nullable().openapi({ example: "Order service" });

export const RateLimitSchema = z
  .strictObject({
    per_second: intRange(1, RATE_LIMIT_MAX.second).optional(),
    per_minute: intRange(1, RATE_LIMIT_MAX.minute).optional(),
  })
  .superRefine((o, ctx) => {
    if ((o.per_second === undefined) === (o.per_minute === undefined))
      ctx.addIssue({ code: "custom", message: "must have exactly one of per_second, per_minute" });
  })
  // Not a named component: the generator would make the component itself nullable, and a union with
  // null would report a bad field inside as a bad rate_limit as a whole.
  .openapi({
    minProperties: 1,
    maxProperties: 1,
    example: { per_second: 5 },
    description:
      "Exactly one of `per_second` (1-1000) and `per_minute` (1-60000). Deliveries to the endpoint start at " +
      "least period/count apart, across every Herald process; those over the limit wait (still `pending`).",
  });

const rateLimit = RateLimitSchema.nullable();

const ordering = z.enum(ORDERINGS).openapi({
  description:
    '"fifo": events arrive in the order Herald accepted them, one at a time; a failing event holds the ' +
    'ones after it until it succeeds or is given up. "none" (the default): no order, several at a time.',
});

export const CreateWebhookSchema = z
  .strictObject({
    url,
    events,
    description: description.optional(),
    rate_limit: rateLimit.optional(),
    ordering: ordering.optional(),
  })
  .openapi("CreateWebhookRequest");

export const UpdateWebhookSchema = z
  .strictObject({
    url: url.optional(),
    events: events.optional(),
    description: description.optional(),
    enabled: z.boolean().optional().openapi({ description: "false disables the endpoint (`manual`)." }),
    rate_limit: rateLimit.optional(),
    ordering: ordering.optional(),
  })
  .refine((o) => Object.values(o).some((v) => v !== undefined), {
    error: "must contain at least one of url, events, description, enabled, rate_limit, ordering",
  })
  .openapi("UpdateWebhookRequest", { minProperties: 1 });

export const RotateSecretSchema = z
  .strictObject({
    grace_period_seconds: intRange(0, 604_800).default(0).openapi({
      description: "How long the previous secret keeps signing too (0-604800 s).",
    }),
  })
  .openapi("RotateSecretRequest");

export const WebhookSchema = z
  .object({
    id: z.uuid(),
    url: z.string().openapi({ format: "uri" }),
    events: z.array(EventTypeSchema),
    enabled: z.boolean(),
    description: z.string().nullable(),
    created_at: z.iso
      .datetime()
      .openapi({ example: "2026-11-21T10:00:00Z", description: "Second precision." }),
    updated_at: timestamp("Last change."),
    disabled_reason: z.enum(DISABLED_REASONS).nullable(),
    rate_limit: rateLimit,
    ordering,
    held: z.int().min(0).openapi({
      description:
        "Deliveries its ordering holds back: for a FIFO endpoint, every pending delivery but the one at its head.",
    }),
  })
  .openapi("Webhook", { description: "A registered endpoint. The secret is never shown again." });

export const WebhookWithSecretSchema = z
  .object({
    ...WebhookSchema.shape,
    secret: z.string().openapi({
      example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8zDdPGsEOqM=",
      description: "Shown only now: whsec_ + base64 of 32 random bytes.",
    }),
  })
  .openapi("WebhookWithSecret");

export const WebhookListSchema = listOf(WebhookSchema, "WebhookList");

export const WebhookIdParams = z.object({ id: uuidParam("id", "The endpoint id.") });

export const ListWebhooksQuery = z.object({
  enabled: z
    .enum(["true", "false"])
    .optional()
    .openapi({ param: { name: "enabled", in: "query" }, description: "Only enabled or disabled endpoints." }),
  event: z
    .enum(EVENT_TYPES)
    .optional()
    .openapi({
      param: { name: "event", in: "query" },
      description: "Only endpoints subscribed to this type.",
    }),
  ...pageQuery,
});

export type WebhookJson = z.infer<typeof WebhookSchema>;
