import { z } from "@hono/zod-openapi";
import { MAX_BATCH_EVENTS } from "../../../../app/events.ts";
import { EVENT_ID_PATTERN } from "../../../../domain/envelope.ts";
import {
  EVENT_DATA_SCHEMAS,
  EVENT_DESCRIPTIONS,
  EVENT_TYPES,
  type EventType,
  PUBLISHED_EVENT_TYPES,
  resourceIdField,
} from "../../../../domain/event-catalog.ts";
import type { HttpApp } from "../../env.ts";
import { timestamp } from "../shared.ts";

// The document's view of events: one variant per event type, discriminated by `type`, each with the
// domain's own zod schema of its `data`, so the document cannot drift from what the domain checks.
// The routes validate with the schemas of schema.ts (the same checks, with the error paths clients
// already know) and name these components with `documentedAs`.

/** `message.partially_delivered` -> `MessagePartiallyDelivered`: the stem of a type's component names. */
export function componentStem(type: EventType): string {
  return type
    .split(/[._]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
}

const EMAIL_NOTE =
  "When `channel` is `email`, `recipient` must be an e-mail address. A message event's free-form `metadata` may nest at most 10 levels, hold at most 500 keys and array items in all, keys of at most 256 and strings of at most 8192 characters.";

function dataSchema(type: EventType) {
  const note = type.startsWith("message.") ? ` ${EMAIL_NOTE}` : "";
  // A clone: a schema built before @hono/zod-openapi extended zod (the domain may load first) lacks .openapi.
  return (EVENT_DATA_SCHEMAS[type] as unknown as z.ZodObject).clone().openapi(`${componentStem(type)}Data`, {
    description: `The data of ${type}: ${EVENT_DESCRIPTIONS[type]}${note}`,
  });
}

const DATA = Object.fromEntries(EVENT_TYPES.map((t) => [t, dataSchema(t)])) as Record<
  EventType,
  ReturnType<typeof dataSchema>
>;

const typeLiteral = (type: EventType) => z.literal(type).openapi({ description: EVENT_DESCRIPTIONS[type] });

function publishFields(type: EventType) {
  const field = resourceIdField(type);
  return {
    type: typeLiteral(type),
    data: DATA[type],
    resource_id: z
      .uuid()
      .optional()
      .openapi({
        description: `The subject's id: when given, it must equal \`data.${field}\` (the envelope's \`resource_id\` is always \`data.${field}\`); best left out.`,
      }),
    occurred_at: z.iso
      .datetime({ offset: true })
      .optional()
      .openapi({ description: "When it happened (ISO 8601); defaults to now." }),
  };
}

const idempotencyKeyField = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x20-\x7e]+$/)
  .optional()
  .openapi({
    description:
      "This event's Idempotency-Key: a repeat within 24 h (in a batch or as POST /events with the header) returns the first answer without a second fan-out.",
  });

function envelopeFields(type: EventType) {
  return {
    id: z.string().regex(EVENT_ID_PATTERN).openapi({ example: "evt_4f9a0c2e8b7d4e1f9a3c5b7d9e1f3a5c" }),
    type: typeLiteral(type),
    version: z.literal("1"),
    occurred_at: timestamp("When it happened."),
    tenant_id: z.uuid(),
    project_id: z.uuid(),
    resource_id: z.uuid().openapi({ description: `The subject's id: \`data.${resourceIdField(type)}\`.` }),
    data: DATA[type],
  };
}

function union<T extends z.ZodObject>(variants: T[], name: string, description: string) {
  return z.discriminatedUnion("type", variants as unknown as [T, ...T[]]).openapi(name, { description });
}

/** `POST /events`: one variant per type. */
export const PublishEventUnion = union(
  PUBLISHED_EVENT_TYPES.map((t) => z.strictObject(publishFields(t)).openapi(`${componentStem(t)}Publish`)),
  "PublishEventRequest",
  "An event to publish: its `type` and the `data` that type defines (fields it does not define are refused). The operational types (`endpoint.*`, `delivery.exhausted`) are emitted by Herald itself and cannot be published.",
);

/** One item of `POST /events/batch`: a `POST /events` body plus its own Idempotency-Key. */
export const PublishBatchEventUnion = union(
  PUBLISHED_EVENT_TYPES.map((t) =>
    z
      .strictObject({ ...publishFields(t), idempotency_key: idempotencyKeyField })
      .openapi(`${componentStem(t)}BatchItem`),
  ),
  "PublishBatchEvent",
  `One event of a batch (of 1 to ${MAX_BATCH_EVENTS}): what POST /events takes, plus its own optional \`idempotency_key\`.`,
);

/** The envelope, exactly as it is posted to endpoints: one variant per type. */
export const EventUnion = union(
  EVENT_TYPES.map((t) =>
    z.object(envelopeFields(t)).openapi(`${componentStem(t)}Event`, {
      description: `The envelope of ${t}, as posted to endpoints.`,
    }),
  ),
  "Event",
  "The envelope, exactly as it is posted to endpoints; `data` is what its `type` defines. Receivers should ignore fields they do not know.",
);

/** What publishing answers: the envelope plus how many endpoints it was fanned out to. */
export const PublishedEventUnion = union(
  PUBLISHED_EVENT_TYPES.map((t) =>
    z
      .object({
        ...envelopeFields(t),
        endpoints: z
          .number()
          .int()
          .min(0)
          .openapi({ description: "How many endpoints it was fanned out to." }),
      })
      .openapi(`${componentStem(t)}Published`),
  ),
  "PublishedEvent",
  "The envelope as it is posted to endpoints, plus how many endpoints it was fanned out to.",
);

const SIGNATURE_HEADERS = z.object({
  "X-Webhook-Id": z
    .string()
    .optional()
    .openapi({
      param: { name: "X-Webhook-Id", in: "header" },
      description: "herald-v1: the event id (unsigned: deduplicate on the verified envelope's `id`).",
    }),
  "X-Webhook-Timestamp": z
    .string()
    .optional()
    .openapi({
      param: { name: "X-Webhook-Timestamp", in: "header" },
      description: "herald-v1: when it was signed, unix seconds.",
    }),
  "X-Webhook-Signature": z
    .string()
    .optional()
    .openapi({
      param: { name: "X-Webhook-Signature", in: "header" },
      description:
        "herald-v1: `v1=<hex HMAC-SHA256 of <timestamp>.<body>>`, one per secret, space-separated.",
    }),
  "webhook-id": z
    .string()
    .optional()
    .openapi({
      param: { name: "webhook-id", in: "header" },
      description: "standard-webhooks and standard-webhooks-ed25519: the event id.",
    }),
  "webhook-timestamp": z
    .string()
    .optional()
    .openapi({
      param: { name: "webhook-timestamp", in: "header" },
      description: "standard-webhooks and standard-webhooks-ed25519: when it was signed, unix seconds.",
    }),
  "webhook-signature": z
    .string()
    .optional()
    .openapi({
      param: { name: "webhook-signature", in: "header" },
      description:
        "standard-webhooks: `v1,<base64 HMAC>`; standard-webhooks-ed25519: `v1a,<base64 Ed25519 signature>`; one per key, space-separated.",
    }),
});

/** Registers the per-type components, which the routes name by reference only. */
export function registerEventPayloads(registry: HttpApp["openAPIRegistry"]): void {
  registry.register("PublishEventRequest", PublishEventUnion);
  registry.register("PublishBatchEvent", PublishBatchEventUnion);
  registry.register("Event", EventUnion);
  registry.register("PublishedEvent", PublishedEventUnion);
}

/**
 * Registers, under the document's `webhooks`, what a receiver gets for each event type: the signed
 * envelope, posted to the endpoint's URL. On the root app: a sub-app's registry prefixes its paths.
 */
export function registerEventWebhooks(registry: HttpApp["openAPIRegistry"]): void {
  for (const type of EVENT_TYPES) {
    registry.registerWebhook({
      method: "post",
      path: type,
      operationId: `receive${componentStem(type)}`,
      tags: ["Receiving"],
      summary: type,
      description: `${EVENT_DESCRIPTIONS[type]} Herald posts this envelope to each endpoint subscribed to ${type}, signed as the endpoint's \`signature_scheme\` says; verify the signature over the raw body before parsing it (the verifier libraries do both).`,
      security: [],
      request: {
        headers: SIGNATURE_HEADERS,
        body: {
          required: true,
          content: { "application/json": { schema: EventUnion.options[EVENT_TYPES.indexOf(type)]! } },
        },
      },
      responses: {
        200: { description: "Any 2xx answer acknowledges the delivery; anything else is retried." },
      },
    });
  }
}
