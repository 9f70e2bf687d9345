import { z } from "@hono/zod-openapi";
import { HEADER_VALUE_MASK } from "../../../../domain/custom-headers.ts";
import { DESTINATION_KINDS } from "../../../../domain/destination.ts";
import { CREDENTIAL_MASK } from "../../../../domain/destination-values.ts";
import { DISABLED_REASONS } from "../../../../domain/endpoint.ts";
import { EVENT_TYPES } from "../../../../domain/event-catalog.ts";
import { DEFAULT_SIGNATURE_SCHEME, SIGNATURE_SCHEMES } from "../../../../domain/signature-scheme.ts";
import { EventTypeSchema, intRange, listOf, pageQuery, timestamp, uuidParam } from "../shared.ts";
import {
  destinationPatchFields,
  KafkaInputSchema,
  KafkaSchema,
  RabbitmqInputSchema,
  RabbitmqSchema,
  SqsInputSchema,
  SqsSchema,
} from "./destination-fields.ts";
import {
  ClientCertificateSchema,
  changeHeaders,
  clientCertificateInput,
  createHeaders,
  description,
  events,
  filter,
  ordering,
  rateLimit,
  signatureScheme,
  url,
} from "./fields.ts";

/** What every kind of endpoint is created with. */
const createCommon = {
  events,
  description: description.optional(),
  headers: createHeaders.optional(),
  signature_scheme: signatureScheme.optional().openapi({ default: DEFAULT_SIGNATURE_SCHEME }),
  filter: filter.optional(),
  rate_limit: rateLimit.optional(),
  ordering: ordering.optional(),
};

const kindOf = <K extends string>(kind: K, what: string) =>
  z.literal(kind).openapi({ description: `\`${kind}\`: deliveries go to ${what}.` });

// One variant per kind (ADR 27), like the event payloads' union. `kind` may be left out for HTTPS, so the
// document's oneOf has no discriminator object (it needs the property present): the variants are told
// apart by their `kind` enums and their required objects.
export const CreateWebhookSchema = z
  .discriminatedUnion("kind", [
    z
      .strictObject({
        kind: kindOf("https", "an HTTPS URL (the default)").optional(),
        url,
        ...createCommon,
        client_certificate: clientCertificateInput.nullable().optional(),
      })
      .openapi("CreateHttpsWebhookRequest"),
    z
      .strictObject({ kind: kindOf("kafka", "a Kafka topic"), kafka: KafkaInputSchema, ...createCommon })
      .openapi("CreateKafkaWebhookRequest"),
    z
      .strictObject({
        kind: kindOf("rabbitmq", "a RabbitMQ exchange"),
        rabbitmq: RabbitmqInputSchema,
        ...createCommon,
      })
      .openapi("CreateRabbitmqWebhookRequest"),
    z
      .strictObject({ kind: kindOf("sqs", "an Amazon SQS queue"), sqs: SqsInputSchema, ...createCommon })
      .openapi("CreateSqsWebhookRequest"),
  ])
  .openapi("CreateWebhookRequest", {
    description:
      "An endpoint to register: an HTTPS URL (`kind` https, or left out), or a Kafka topic, a RabbitMQ exchange or an SQS queue (`kind` and the object of that name). A broker endpoint's `url` is derived from its object; sending one is refused.",
  });

export const UpdateWebhookSchema = z
  .strictObject({
    url: url.optional(),
    events: events.optional(),
    description: description.optional(),
    enabled: z.boolean().optional().openapi({ description: "false disables the endpoint (`manual`)." }),
    headers: changeHeaders.optional(),
    signature_scheme: signatureScheme.optional(),
    // A new filter replaces the old one; null removes it.
    filter: filter.optional(),
    rate_limit: rateLimit.optional(),
    ordering: ordering.optional(),
    // A new certificate and key replace the old pair; null removes it.
    client_certificate: clientCertificateInput.nullable().optional(),
    kind: z.enum(DESTINATION_KINDS).optional().openapi({
      description:
        "Only the endpoint's own kind: a kind never changes (a different kind is a different endpoint).",
    }),
    ...destinationPatchFields,
  })
  .refine((o) => Object.values(o).some((v) => v !== undefined), {
    error:
      "must contain at least one of url, events, description, enabled, headers, signature_scheme, filter, rate_limit, ordering, client_certificate, kafka, rabbitmq, sqs",
  })
  .openapi("UpdateWebhookRequest", { minProperties: 1 });

export const RotateSecretSchema = z
  .strictObject({
    grace_period_seconds: intRange(0, 604_800).default(0).openapi({
      description: "How long the previous secret keeps signing too (0-604800 s).",
    }),
  })
  .openapi("RotateSecretRequest");

const webhookCommon = {
  id: z.uuid(),
  url: z.string().openapi({
    description:
      "Where deliveries go: the HTTPS URL, or a broker destination's address without credentials (`kafka://b1:9092,b2:9092/orders`, `amqps://herald@mq.example.com/prod?exchange=events&routing_key=orders`, the SQS queue URL).",
  }),
  events: z.array(EventTypeSchema),
  enabled: z.boolean(),
  description: z.string().nullable(),
  created_at: z.iso.datetime().openapi({ example: "2026-11-21T10:00:00Z", description: "Second precision." }),
  updated_at: timestamp("Last change."),
  disabled_reason: z.enum(DISABLED_REASONS).nullable(),
  signature_scheme: z.enum(SIGNATURE_SCHEMES).openapi({ description: "How deliveries are signed." }),
  public_key: z.string().nullable().openapi({
    example: "whpk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8zDdPGsEOqM=",
    description:
      "For `standard-webhooks-ed25519`: the public key receivers verify `v1a` signatures with, `whpk_` + base64 of the 32-byte raw Ed25519 key (the newest one, during a rotation grace period). null for the HMAC schemes. The private key is never shown.",
  }),
  headers: z.record(z.string(), z.literal(HEADER_VALUE_MASK)).openapi({
    example: { Authorization: HEADER_VALUE_MASK },
    description: `The custom headers sent with every delivery, each value shown as ${HEADER_VALUE_MASK}.`,
  }),
  filter,
  rate_limit: rateLimit,
  ordering,
  client_certificate: ClientCertificateSchema.nullable().openapi({
    description:
      "The client certificate presented when the receiver asks for one (mutual TLS), or null. Its private key is never shown.",
  }),
  held: z.int().min(0).openapi({
    description:
      "Deliveries its ordering holds back: for a FIFO endpoint, every pending delivery but the one at its head.",
  }),
};

const issuedSecret = z.string().openapi({
  example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8zDdPGsEOqM=",
  description:
    "What the receiver verifies with, issued now. HMAC schemes: the secret, whsec_ + base64 of 32 random bytes, shown only now. `standard-webhooks-ed25519`: the public key (whpk_, the same as `public_key`, readable at any time); the private key is never shown.",
});

/**
 * An endpoint answer as a union of one variant per kind (ADR 27), each named `<Kind><name>`, with the
 * fields `extra` adds. Whole variants rather than an allOf of the union: a generated client would read
 * an allOf's own name as its `kind`.
 */
function webhookUnion<E extends z.ZodRawShape>(name: string, extra: E, description: string) {
  return z
    .discriminatedUnion("kind", [
      z.object({ kind: z.literal("https"), ...webhookCommon, ...extra }).openapi(`Https${name}`),
      z
        .object({ kind: z.literal("kafka"), kafka: KafkaSchema, ...webhookCommon, ...extra })
        .openapi(`Kafka${name}`),
      z
        .object({ kind: z.literal("rabbitmq"), rabbitmq: RabbitmqSchema, ...webhookCommon, ...extra })
        .openapi(`Rabbitmq${name}`),
      z.object({ kind: z.literal("sqs"), sqs: SqsSchema, ...webhookCommon, ...extra }).openapi(`Sqs${name}`),
    ])
    .openapi(name, { description });
}

const webhookText = `A registered endpoint, one variant per \`kind\`. The secret is never shown again; an Ed25519 private key, custom header values and a destination's credentials never at all (${CREDENTIAL_MASK}).`;

export const WebhookSchema = webhookUnion("Webhook", {}, webhookText);

export const WebhookWithSecretSchema = webhookUnion(
  "WebhookWithSecret",
  { secret: issuedSecret },
  `${webhookText} With the secret (or public key) just issued.`,
);

export const ChangedWebhookSchema = webhookUnion(
  "ChangedWebhook",
  { secret: issuedSecret.optional() },
  "The endpoint as it now is; with `secret` when the change issued a key (a switch between an HMAC scheme and `standard-webhooks-ed25519`).",
);

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
