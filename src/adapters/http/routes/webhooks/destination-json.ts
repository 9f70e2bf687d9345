// Between the API's snake_case destination objects and the domain's (ADR 27). Answers show credentials
// only as the mask: what is stored is sealed text, and never leaves through here.
import type { z } from "@hono/zod-openapi";
import type { BrokerDestination } from "../../../../domain/destination.ts";
import { type DestinationPatch, maskedDestination } from "../../../../domain/destination-values.ts";
import { invalid } from "../../../../domain/errors.ts";
import type {
  destinationPatchFields,
  KafkaInputSchema,
  KafkaSchema,
  RabbitmqInputSchema,
  RabbitmqSchema,
  SqsInputSchema,
  SqsSchema,
} from "./destination-fields.ts";

type CreateBody =
  | { kind: "kafka"; kafka: z.infer<typeof KafkaInputSchema> }
  | { kind: "rabbitmq"; rabbitmq: z.infer<typeof RabbitmqInputSchema> }
  | { kind: "sqs"; sqs: z.infer<typeof SqsInputSchema> };

/** The destination a creation names, credentials plain; null for an HTTPS endpoint. */
export function destinationOf(
  body: CreateBody | { kind?: "https" | undefined },
): BrokerDestination<string> | null {
  if (!("kind" in body) || body.kind === undefined || body.kind === "https") return null;
  if (body.kind === "kafka") return { kind: "kafka", ...body.kafka };
  if (body.kind === "rabbitmq") {
    const r = body.rabbitmq;
    return {
      kind: "rabbitmq",
      url: r.url,
      password: r.password ?? null,
      exchange: r.exchange,
      routingKey: r.routing_key,
    };
  }
  if (body.kind !== "sqs") return null;
  const s = body.sqs;
  return {
    kind: "sqs",
    queueUrl: s.queue_url,
    region: s.region,
    accessKeyId: s.access_key_id,
    secretAccessKey: s.secret_access_key,
    sessionToken: s.session_token ?? null,
    endpointUrl: s.endpoint_url ?? null,
    key: s.key,
  };
}

type PatchBody = { [K in keyof typeof destinationPatchFields]?: z.infer<(typeof destinationPatchFields)[K]> };

/** The destination change a PATCH names, or undefined; more than one kind's object is a 422. */
export function destinationPatchOf(body: PatchBody): DestinationPatch | undefined {
  const given = (["kafka", "rabbitmq", "sqs"] as const).filter((k) => body[k] !== undefined);
  if (given.length > 1)
    throw invalid(
      given.map((k) => ({ path: k, message: "must be alone: give only the object of the endpoint's kind" })),
    );
  if (body.kafka) return { kind: "kafka", ...body.kafka };
  if (body.rabbitmq) {
    const { routing_key, ...r } = body.rabbitmq;
    return { kind: "rabbitmq", ...r, routingKey: routing_key };
  }
  if (body.sqs) {
    const s = body.sqs;
    return {
      kind: "sqs",
      queueUrl: s.queue_url,
      region: s.region,
      accessKeyId: s.access_key_id,
      secretAccessKey: s.secret_access_key,
      sessionToken: s.session_token,
      endpointUrl: s.endpoint_url,
      key: s.key,
    };
  }
  return undefined;
}

export type DestinationJson =
  | { kind: "kafka"; kafka: z.infer<typeof KafkaSchema> }
  | { kind: "rabbitmq"; rabbitmq: z.infer<typeof RabbitmqSchema> }
  | { kind: "sqs"; sqs: z.infer<typeof SqsSchema> };

/** An endpoint's kind and destination object as answers show them, credentials masked. */
export function destinationJson(
  stored: BrokerDestination<string> | null,
): DestinationJson | { kind: "https" } {
  if (stored === null) return { kind: "https" };
  const d = maskedDestination(stored);
  if (d.kind === "kafka")
    return {
      kind: "kafka",
      kafka: { brokers: d.brokers, topic: d.topic, key: d.key, tls: d.tls, sasl: d.sasl },
    };
  if (d.kind === "rabbitmq")
    return {
      kind: "rabbitmq",
      rabbitmq: { url: d.url, password: d.password, exchange: d.exchange, routing_key: d.routingKey },
    };
  return {
    kind: "sqs",
    sqs: {
      queue_url: d.queueUrl,
      region: d.region,
      access_key_id: d.accessKeyId,
      secret_access_key: d.secretAccessKey,
      session_token: d.sessionToken,
      endpoint_url: d.endpointUrl,
      key: d.key,
    },
  };
}
