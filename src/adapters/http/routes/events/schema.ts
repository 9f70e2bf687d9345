import { z } from "@hono/zod-openapi";
import { MAX_BATCH_EVENTS } from "../../../../app/events.ts";
import { EVENT_ID_PATTERN } from "../../../../domain/envelope.ts";
import { ProblemSchema, ValidationProblemSchema } from "../../errors.ts";
import { documentedAs, EventTypeSchema, timestamp } from "../shared.ts";

// The runtime checks of events; the document names the per-type unions of payloads.ts instead.
const PublishEventFields = z.strictObject({
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
});

/** The body of POST /events (and a filter test's event), documented as `PublishEventRequest`. */
export const PublishEventSchema = documentedAs(PublishEventFields, "PublishEventRequest");

const EventFields = z.object({
  id: z.string().regex(EVENT_ID_PATTERN).openapi({ example: "evt_4f9a0c2e8b7d4e1f9a3c5b7d9e1f3a5c" }),
  type: EventTypeSchema,
  version: z.literal("1"),
  occurred_at: timestamp("When it happened."),
  tenant_id: z.uuid(),
  project_id: z.uuid(),
  resource_id: z.uuid(),
  data: z.record(z.string(), z.unknown()),
});

/** The envelope, documented as `Event` (one variant per type). */
export const EventSchema = documentedAs(EventFields, "Event");

export const PublishedEventSchema = documentedAs(
  z.object({ ...EventFields.shape, endpoints: z.number().int().min(0) }),
  "PublishedEvent",
);

/** An Idempotency-Key: 1 to 255 printable ASCII characters. */
const idempotencyKey = () =>
  z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x20-\x7e]+$/, { error: "must be printable ASCII" });

export const PublishHeaders = z.object({
  "idempotency-key": idempotencyKey()
    .optional()
    .openapi({
      param: { name: "idempotency-key", in: "header" },
      description: "A repeat within 24 h returns the first answer without a second fan-out.",
    }),
});

/**
 * One event of a batch: what POST /events takes, plus the Idempotency-Key it would have had as a header.
 * Checked by the handler; the document names it `PublishBatchEvent`.
 */
export const BatchEventSchema = z.strictObject({
  ...PublishEventFields.shape,
  idempotency_key: idempotencyKey().optional().openapi({
    description:
      "This event's Idempotency-Key: a repeat within 24 h (in a batch or as POST /events with the header) returns the first answer without a second fan-out.",
  }),
});

// Each event is checked on its own in the handler, so one bad event fails alone: the body's schema
// takes any JSON values as events and the document names what each must be.
export const PublishBatchSchema = z
  .strictObject({
    events: z
      .array(z.unknown())
      .min(1, { error: `must hold 1 to ${MAX_BATCH_EVENTS} events` })
      .max(MAX_BATCH_EVENTS, { error: `must hold 1 to ${MAX_BATCH_EVENTS} events` })
      .openapi({
        items: { $ref: "#/components/schemas/PublishBatchEvent" },
        description: `1 to ${MAX_BATCH_EVENTS} events, each what POST /events takes plus its own optional \`idempotency_key\`; the whole body at most 256 KiB.`,
      }),
  })
  .openapi("PublishBatchRequest");

export const BatchPublishedSchema = z
  .object({
    status: z.literal(202),
    event: PublishedEventSchema,
    replayed: z.boolean().openapi({
      description: "True when an earlier request with the same idempotency key produced this answer.",
    }),
  })
  .openapi("BatchPublished", {
    description: "An event stored (or replayed): as POST /events would have answered it.",
  });

export const BatchFailedSchema = z
  .object({
    status: z.number().int().min(400).max(599).openapi({ example: 422 }),
    problem: z.union([ValidationProblemSchema, ProblemSchema]),
  })
  .openapi("BatchFailed", {
    description:
      "An event not stored, with the problem POST /events would have answered (422 invalid, 409 key reused with another body, 503 database unavailable...).",
  });

export const BatchResultSchema = z
  .object({
    data: z.array(z.union([BatchPublishedSchema, BatchFailedSchema])).openapi({
      description: "One result per event, in the order given.",
    }),
  })
  .openapi("PublishBatchResult");

export const EventIdParams = z.object({
  id: z
    .string()
    .regex(EVENT_ID_PATTERN)
    .openapi({ param: { name: "id", in: "path" }, description: "evt_ and 32 hex characters." }),
});
