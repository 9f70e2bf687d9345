// A broker destination's object in the API (ADR 27): `kafka`, `rabbitmq` or `sqs`, as a creation gives it
// (defaults applied), as a change patches it (every field optional, null clears a nullable one), and as
// answers show it (credentials masked). The rules are the domain's (destination-rules.ts), checked by the
// use case so every issue names its path; the schemas state shapes and sizes.
import { z } from "@hono/zod-openapi";
import { MESSAGE_KEYS, SASL_MECHANISMS } from "../../../../domain/destination.ts";
import {
  AMQP_SHORTSTR_BYTES,
  MAX_CA_PEM_LENGTH,
  MAX_CREDENTIAL_LENGTH,
  MAX_KAFKA_BROKERS,
} from "../../../../domain/destination-rules.ts";
import { CREDENTIAL_MASK } from "../../../../domain/destination-values.ts";
import { MAX_URL_LENGTH } from "../../../../domain/endpoint-url.ts";

const sealedNote = `Sealed at rest (AES-256-GCM under HERALD_MASTER_KEY) and shown as ${CREDENTIAL_MASK} in every answer; a change without it keeps it.`;
const credential = (description: string) =>
  z
    .string()
    .max(MAX_CREDENTIAL_LENGTH)
    // Documented, not parsed: the domain refuses an empty one beside every other issue of the request.
    .openapi({ minLength: 1, description: `${description} ${sealedNote}` });
const mask = z.literal(CREDENTIAL_MASK);
const key = z.enum(MESSAGE_KEYS).openapi({
  description:
    "The Kafka record key / SQS FIFO MessageGroupId: `resource` (the event's resource_id: a resource's events stay in one partition or group) or `endpoint` (the endpoint id: one partition or group, a total order).",
});

// ---- Kafka
// The patterns below say in the document what destination-rules.ts checks (so a generated client or a
// fuzzer sends what Herald takes); the domain's checks stay the ones that answer, with their own words.
const brokers = z
  .array(z.string().max(300).openapi({ pattern: "^(\\[[0-9A-Fa-f:.]+\\]|[^:\\[\\]/\\s@]+):[0-9]{1,5}$" }))
  .openapi({
    minItems: 1,
    maxItems: MAX_KAFKA_BROKERS,
    example: ["b1.example.com:9092", "b2.example.com:9092"],
    description: `1-${MAX_KAFKA_BROKERS} bootstrap brokers as host:port (an IPv6 address in brackets). Private and loopback addresses are refused unless HERALD_ALLOW_PRIVATE_NETWORKS, here and for every broker the cluster advertises.`,
  });
const topic = z.string().max(249).openapi({
  pattern: "^[A-Za-z0-9._-]{1,249}$",
  example: "orders",
  description: "The topic: 1-249 of letters, digits, '.', '_', '-', not '.' or '..' (Kafka's rule).",
});
const tls = z
  .union([z.boolean(), z.strictObject({ ca: z.string().max(MAX_CA_PEM_LENGTH).openapi({ minLength: 1 }) })])
  .openapi({
    description:
      "TLS to the brokers: true (the system's roots), false (plaintext), or `{ca}`: PEM certificates to trust.",
  });
const saslFields = {
  mechanism: z.enum(SASL_MECHANISMS),
  username: z.string().max(255).openapi({ example: "herald" }),
};

export const KafkaInputSchema = z
  .strictObject({
    brokers,
    topic,
    key: key.default("resource"),
    tls: tls.default(true),
    sasl: z
      .strictObject({ ...saslFields, password: credential("The SASL password.") })
      .nullable()
      .default(null),
  })
  .openapi("KafkaDestinationInput", { description: "Where a Kafka endpoint's events go." });

const kafkaPatch = z
  .strictObject({
    brokers: brokers.optional(),
    topic: topic.optional(),
    key: key.optional(),
    tls: tls.optional(),
    sasl: z
      .strictObject({
        mechanism: saslFields.mechanism.optional(),
        username: saslFields.username.optional(),
        password: credential("The SASL password.").optional(),
      })
      .nullable()
      .optional()
      .openapi({ description: "Merged into the current SASL settings; null turns SASL off." }),
  })
  .openapi("KafkaDestinationChange", {
    description: "A JSON merge patch of a Kafka endpoint's destination.",
  });

export const KafkaSchema = z
  .object({
    brokers: z.array(z.string()),
    topic: z.string(),
    key: z.enum(MESSAGE_KEYS),
    tls: z.union([z.boolean(), z.object({ ca: z.string() })]),
    sasl: z.object({ ...saslFields, password: mask }).nullable(),
  })
  .openapi("KafkaDestination");

// ---- RabbitMQ
const amqpUrl = z.string().max(MAX_URL_LENGTH).openapi({
  pattern: "^amqps?://[^\\s?#]+$",
  example: "amqps://herald@mq.example.com:5671/prod",
  description:
    "amqps:// or amqp:// URL: user, host, port, vhost; no query. A password written in it is taken out and kept as `password`.",
});
const exchange = z.string().max(AMQP_SHORTSTR_BYTES).openapi({
  pattern: "^[A-Za-z0-9_.:-]*$",
  example: "events",
  description:
    "The exchange to publish to: letters, digits, '-', '_', '.', ':' (\"\": the default exchange).",
});
const routingKey = z.string().openapi({
  example: "orders",
  description: `The routing key, at most ${AMQP_SHORTSTR_BYTES} bytes (UTF-8). A message no queue is bound for fails as \`unroutable\`.`,
});
const amqpPassword = credential("The AMQP password.");

export const RabbitmqInputSchema = z
  .strictObject({
    url: amqpUrl,
    password: amqpPassword.nullable().optional(),
    exchange: exchange.default(""),
    routing_key: routingKey.default(""),
  })
  .openapi("RabbitmqDestinationInput", { description: "Where a RabbitMQ endpoint's events go." });

const rabbitmqPatch = z
  .strictObject({
    url: amqpUrl.optional(),
    password: amqpPassword.nullable().optional(),
    exchange: exchange.optional(),
    routing_key: routingKey.optional(),
  })
  .openapi("RabbitmqDestinationChange", {
    description: "A JSON merge patch of a RabbitMQ endpoint's destination.",
  });

export const RabbitmqSchema = z
  .object({ url: z.string(), password: mask.nullable(), exchange: z.string(), routing_key: z.string() })
  .openapi("RabbitmqDestination");

// ---- SQS
const queueUrl = z.string().max(MAX_URL_LENGTH).openapi({
  format: "uri",
  pattern: "^https?://[^/\\s?#]+/[^/\\s?#]+/[A-Za-z0-9_-]{1,80}(\\.fifo)?$",
  example: "https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo",
  description:
    "The queue URL; a name ending in `.fifo` is a FIFO queue (group and deduplication ids are set).",
});
const region = z.string().max(64).openapi({ pattern: "^[a-z0-9-]{1,64}$", example: "eu-west-1" });
const accessKeyId = z.string().max(128).openapi({
  pattern: "^[A-Za-z0-9]{1,128}$",
  example: "AKIAIOSFODNN7EXAMPLE",
  description: "Shown: it authorises nothing alone.",
});
const endpointUrl = z.string().max(MAX_URL_LENGTH).openapi({
  format: "uri",
  description: "For an SQS-compatible server: its URL instead of AWS's endpoint for the region.",
});

export const SqsInputSchema = z
  .strictObject({
    queue_url: queueUrl,
    region,
    access_key_id: accessKeyId,
    secret_access_key: credential("The secret access key."),
    session_token: credential("A session token (temporary credentials).").nullable().optional(),
    endpoint_url: endpointUrl.nullable().optional(),
    key: key.default("resource"),
  })
  .openapi("SqsDestinationInput", {
    description:
      "Where an SQS endpoint's events go. Custom headers travel as message attributes: at most 7 beside the 3 signature headers, names under AWS's rules.",
  });

const sqsPatch = z
  .strictObject({
    queue_url: queueUrl.optional(),
    region: region.optional(),
    access_key_id: accessKeyId.optional(),
    secret_access_key: credential("The secret access key.").optional(),
    session_token: credential("A session token.").nullable().optional(),
    endpoint_url: endpointUrl.nullable().optional(),
    key: key.optional(),
  })
  .openapi("SqsDestinationChange", { description: "A JSON merge patch of an SQS endpoint's destination." });

export const SqsSchema = z
  .object({
    queue_url: z.string(),
    region: z.string(),
    access_key_id: z.string(),
    secret_access_key: mask,
    session_token: mask.nullable(),
    endpoint_url: z.string().nullable(),
    key: z.enum(MESSAGE_KEYS),
  })
  .openapi("SqsDestination");

/** The change fields of PATCH /webhooks/{id}: each a merge patch of that kind's destination. */
export const destinationPatchFields = {
  kafka: kafkaPatch.optional(),
  rabbitmq: rabbitmqPatch.optional(),
  sqs: sqsPatch.optional(),
};
