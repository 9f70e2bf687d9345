import { z } from "@hono/zod-openapi";
import type { ErasureRecord } from "../../../../app/ports/erasures.ts";
import { RECIPIENT_MAX_LENGTH } from "../../../../domain/erasure.ts";
import { isoMillis } from "../../../../domain/time.ts";
import { documentedAs, listOf, pageQuery, timestamp, uuidParam } from "../shared.ts";

const resourceId = z.uuid().openapi({
  description: "Erase every event whose `resource_id` is this (a message's or a domain's id).",
  example: "6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10",
});
const recipient = z.string().min(1).max(RECIPIENT_MAX_LENGTH).regex(/\S/).openapi({
  description:
    "Erase every event whose `data.recipient` is this address (compared trimmed and case-insensitively). Message events carry a recipient; domain events do not.",
  example: "ada@example.com",
});

/** The document's view: exactly one of the two subjects, which the runtime schema checks with its own messages. */
export const CreateErasureDocument = z
  .union([
    z.strictObject({ resource_id: resourceId }).openapi("EraseByResourceId"),
    z.strictObject({ recipient }).openapi("EraseByRecipient"),
  ])
  .openapi("CreateErasureRequest", { description: "Exactly one of `resource_id` and `recipient`." });

const CreateErasureFields = z.strictObject({
  resource_id: z.uuid().optional().openapi({
    description: "Erase every event whose `resource_id` is this (a message's or a domain's id).",
    example: "6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10",
  }),
  recipient: z.string().min(1).max(RECIPIENT_MAX_LENGTH).optional().openapi({
    description:
      "Erase every event whose `data.recipient` is this address (compared trimmed and case-insensitively). Message events carry a recipient; domain events do not.",
    example: "ada@example.com",
  }),
});

/** The body of POST /erasures, documented as `CreateErasureRequest`. */
export const CreateErasureSchema = documentedAs(CreateErasureFields, "CreateErasureRequest");

export const ErasureSchema = z
  .object({
    id: z.uuid(),
    subject: z
      .enum(["resource_id", "recipient"])
      .openapi({ description: "What the events were matched by. The recipient itself is not kept." }),
    resource_id: z
      .uuid()
      .nullable()
      .openapi({ description: "The resource id erased; null for a recipient." }),
    events_erased: z.number().int().min(0).openapi({ description: "Events removed." }),
    deliveries_erased: z.number().int().min(0).openapi({
      description:
        "Delivery records of those events now marked `erased_at`, their `response_body` removed (outcomes stay).",
    }),
    deliveries_cancelled: z.number().int().min(0).openapi({
      description: "Of those, records that were still pending: cancelled, never to be sent.",
    }),
    created_at: timestamp("When the erasure ran."),
  })
  .openapi("Erasure", { description: "One erasure and what it removed." });

export const ErasureListSchema = listOf(ErasureSchema, "ErasureList");

export const ErasureIdParams = z.object({ id: uuidParam("id", "The erasure's id.") });

export const ListErasuresQuery = z.object({ ...pageQuery });

export type ErasureJson = z.infer<typeof ErasureSchema>;

/** The public JSON of an erasure record. */
export function presentErasure(r: ErasureRecord): ErasureJson {
  return {
    id: r.id,
    subject: r.subject,
    resource_id: r.resourceId,
    events_erased: r.eventsErased,
    deliveries_erased: r.deliveriesErased,
    deliveries_cancelled: r.deliveriesCancelled,
    created_at: isoMillis(r.createdAt),
  };
}
