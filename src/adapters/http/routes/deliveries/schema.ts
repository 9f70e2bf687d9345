import { z } from "@hono/zod-openapi";
import { DELIVERY_ERRORS, DELIVERY_STATUSES, DELIVERY_TRIGGERS } from "../../../../domain/delivery.ts";
import { EVENT_ID_PATTERN } from "../../../../domain/envelope.ts";
import { EVENT_TYPES } from "../../../../domain/event-catalog.ts";
import { EventTypeSchema, listOf, pageQuery, timestamp, uuidParam } from "../shared.ts";

export const DeliverySchema = z
  .object({
    id: z.uuid(),
    webhook_id: z.uuid(),
    event_id: z.string().regex(EVENT_ID_PATTERN),
    event_type: EventTypeSchema,
    attempt: z.number().int().min(1).openapi({ description: "1, 2, ... per event and endpoint." }),
    trigger: z.enum(DELIVERY_TRIGGERS),
    status: z.enum(DELIVERY_STATUSES),
    url: z.string().openapi({
      description:
        "The endpoint URL this attempt used; for a broker endpoint, its destination's address without credentials.",
    }),
    response_status: z.number().int().nullable(),
    response_body: z.string().nullable().openapi({ description: "The first 4 KiB of the answer, as text." }),
    error: z.enum(DELIVERY_ERRORS).nullable().openapi({
      description:
        "Why the attempt did not succeed: how its send failed, or `superseded` on a `cancelled` automatic attempt that was never sent because another attempt of the same event to this endpoint succeeded first (ADR 19). Null otherwise.",
    }),
    receipt: z
      .record(z.string(), z.union([z.string(), z.number()]))
      .nullable()
      .openapi({
        example: { partition: 1, offset: "42" },
        description:
          "What a broker answered when it stored the message (ADR 27): `{partition, offset}` (Kafka), `{delivery_tag}` (RabbitMQ), `{message_id, sequence_number}` (SQS; the sequence number on FIFO queues). Null for HTTPS attempts (see `response_status`), failures and attempts not made.",
      }),
    duration_ms: z.number().int().nullable(),
    scheduled_at: timestamp("When the attempt is or was due."),
    attempted_at: timestamp("When it was made.").nullable(),
    next_attempt_at: timestamp("When a failed automatic attempt will be followed by another.").nullable(),
    created_at: timestamp("When the record was created."),
    erased_at: timestamp(
      "When an erasure (POST /erasures) removed the event this attempt carried: `response_body` is then null, and an attempt that was still pending was cancelled instead of sent. Null for a record no erasure touched.",
    ).nullable(),
  })
  .openapi("Delivery", { description: "One attempt to POST one event to one endpoint." });

export const DeliveryListSchema = listOf(DeliverySchema, "DeliveryList");

export const DeliveryIdParams = z.object({ delivery_id: uuidParam("delivery_id", "The delivery id.") });

const since = (name: string, description: string) =>
  z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ param: { name, in: "query" }, description });

export const ListDeliveriesQuery = z.object({
  status: z
    .enum(DELIVERY_STATUSES)
    .optional()
    .openapi({ param: { name: "status", in: "query" } }),
  event_type: z
    .enum(EVENT_TYPES)
    .optional()
    .openapi({ param: { name: "event_type", in: "query" } }),
  event_id: z
    .string()
    .regex(EVENT_ID_PATTERN)
    .optional()
    .openapi({ param: { name: "event_id", in: "query" } }),
  since: since("since", "Only records created at or after this time (ISO 8601)."),
  until: since("until", "Only records created before this time (ISO 8601)."),
  ...pageQuery,
});

export type DeliveryJson = z.infer<typeof DeliverySchema>;
