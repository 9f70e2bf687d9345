import type { BrokerDestination } from "../domain/destination.ts";

/**
 * A broker destination as both stores keep it (ADR 27): PostgreSQL's `destination` jsonb and MongoDB's
 * `destination` field, under the API's snake_case names, credentials sealed (`sealed_*`, so a reader of
 * the database sees at once which fields are ciphertext). A type rather than an interface: postgres.js
 * takes it as JSON only so.
 */
export type DestinationRecord =
  | {
      kind: "kafka";
      brokers: string[];
      topic: string;
      key: "resource" | "endpoint";
      tls: boolean | { ca: string };
      sasl: {
        mechanism: "plain" | "scram-sha-256" | "scram-sha-512";
        username: string;
        sealed_password: string;
      } | null;
    }
  | { kind: "rabbitmq"; url: string; sealed_password: string | null; exchange: string; routing_key: string }
  | {
      kind: "sqs";
      queue_url: string;
      region: string;
      access_key_id: string;
      sealed_secret_access_key: string;
      sealed_session_token: string | null;
      endpoint_url: string | null;
      key: "resource" | "endpoint";
    };

/** The stored form of a destination whose credentials are sealed. */
export function toDestinationRecord(d: BrokerDestination<string>): DestinationRecord {
  if (d.kind === "kafka")
    return {
      kind: "kafka",
      brokers: [...d.brokers],
      topic: d.topic,
      key: d.key,
      tls: typeof d.tls === "boolean" ? d.tls : { ca: d.tls.ca },
      sasl: d.sasl && {
        mechanism: d.sasl.mechanism,
        username: d.sasl.username,
        sealed_password: d.sasl.password,
      },
    };
  if (d.kind === "rabbitmq")
    return {
      kind: "rabbitmq",
      url: d.url,
      sealed_password: d.password,
      exchange: d.exchange,
      routing_key: d.routingKey,
    };
  return {
    kind: "sqs",
    queue_url: d.queueUrl,
    region: d.region,
    access_key_id: d.accessKeyId,
    sealed_secret_access_key: d.secretAccessKey,
    sealed_session_token: d.sessionToken,
    endpoint_url: d.endpointUrl,
    key: d.key,
  };
}

/** The destination a stored record holds (its credentials still sealed). */
export function fromDestinationRecord(r: DestinationRecord): BrokerDestination<string> {
  if (r.kind === "kafka")
    return {
      kind: "kafka",
      brokers: [...r.brokers],
      topic: r.topic,
      key: r.key,
      tls: typeof r.tls === "boolean" ? r.tls : { ca: r.tls.ca },
      sasl: r.sasl && {
        mechanism: r.sasl.mechanism,
        username: r.sasl.username,
        password: r.sasl.sealed_password,
      },
    };
  if (r.kind === "rabbitmq")
    return {
      kind: "rabbitmq",
      url: r.url,
      password: r.sealed_password,
      exchange: r.exchange,
      routingKey: r.routing_key,
    };
  return {
    kind: "sqs",
    queueUrl: r.queue_url,
    region: r.region,
    accessKeyId: r.access_key_id,
    secretAccessKey: r.sealed_secret_access_key,
    sessionToken: r.sealed_session_token,
    endpointUrl: r.endpoint_url,
    key: r.key,
  };
}
