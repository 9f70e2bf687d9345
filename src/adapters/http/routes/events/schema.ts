import { z } from "@hono/zod-openapi";
import { EVENT_ID_PATTERN } from "../../../../domain/envelope.ts";
import { EventTypeSchema, timestamp } from "../shared.ts";

export const PublishEventSchema = z
  .strictObject({
    type: EventTypeSchema,
    data: z.record(z.string(), z.unknown()).openapi({
      description:
        "The payload, validated per type: message events need message_id, status, channel, message_type, recipient; domain events need domain_id, domain, status. Fields a type does not define are refused. A message event's free-form `metadata` may nest at most 10 levels, hold at most 500 keys and array items in all, keys of at most 256 and strings of at most 8192 characters.",
      example: {
        message_id: "7d0c5b8e-4a8f-4f4e-9a51-3d5bb7f2c1a0",
        status: "delivered",
        channel: "email",
        message_type: "transactional",
        recipient: "ada@example.com",
      },
    }),
    resource_id: z
      .uuid()
      .optional()
      .openapi({ description: "If given, must equal data.message_id or data.domain_id." }),
    occurred_at: z.iso
      .datetime({ offset: true })
      .optional()
      .openapi({ description: "When it happened (ISO 8601); defaults to now." }),
  })
  .openapi("PublishEventRequest");

export const EventSchema = z
  .object({
    id: z.string().regex(EVENT_ID_PATTERN).openapi({ example: "evt_4f9a0c2e8b7d4e1f9a3c5b7d9e1f3a5c" }),
    type: EventTypeSchema,
    version: z.literal("1"),
    occurred_at: timestamp("When it happened."),
    tenant_id: z.uuid(),
    project_id: z.uuid(),
    resource_id: z.uuid(),
    data: z.record(z.string(), z.unknown()),
  })
  .openapi("Event", { description: "The envelope, exactly as it is posted to endpoints." });

export const PublishedEventSchema = z
  .object({
    ...EventSchema.shape,
    endpoints: z.number().int().min(0).openapi({ description: "How many endpoints it was fanned out to." }),
  })
  .openapi("PublishedEvent");

export const PublishHeaders = z.object({
  "idempotency-key": z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x20-\x7e]+$/, { error: "must be printable ASCII" })
    .optional()
    .openapi({
      param: { name: "idempotency-key", in: "header" },
      description: "A repeat within 24 h returns the first answer without a second fan-out.",
    }),
});

export const EventIdParams = z.object({
  id: z
    .string()
    .regex(EVENT_ID_PATTERN)
    .openapi({ param: { name: "id", in: "path" }, description: "evt_ and 32 hex characters." }),
});
