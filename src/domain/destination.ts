// Where an endpoint's deliveries go (ADR 27): an HTTPS URL (the default), or a Kafka topic, a RabbitMQ
// exchange or an Amazon SQS queue. Pure data: the senders live in src/adapters/destinations/.

export const DESTINATION_KINDS = ["https", "kafka", "rabbitmq", "sqs"] as const;
export type DestinationKind = (typeof DESTINATION_KINDS)[number];

/** What becomes a Kafka record key or an SQS FIFO `MessageGroupId`: the event's resource id, or the endpoint id. */
export const MESSAGE_KEYS = ["resource", "endpoint"] as const;
export type MessageKey = (typeof MESSAGE_KEYS)[number];

export const SASL_MECHANISMS = ["plain", "scram-sha-256", "scram-sha-512"] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

/**
 * A destination's settings. `S` is how a credential is held: `string` (sealed text) in a stored endpoint,
 * plain text in what a sender is given. Credentials are the only fields typed `S`.
 */
export interface KafkaDestination<S = string> {
  kind: "kafka";
  /** 1–10 `host:port`. */
  brokers: string[];
  topic: string;
  key: MessageKey;
  /** TLS to the brokers: true (system roots), false (plaintext), or a PEM CA bundle to trust. */
  tls: boolean | { ca: string };
  sasl: { mechanism: SaslMechanism; username: string; password: S } | null;
}

export interface RabbitmqDestination<S = string> {
  kind: "rabbitmq";
  /** `amqp://` or `amqps://` user@host:port/vhost, never with a password in it. */
  url: string;
  password: S | null;
  /** "" is the default exchange. */
  exchange: string;
  routingKey: string;
}

export interface SqsDestination<S = string> {
  kind: "sqs";
  queueUrl: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: S;
  sessionToken: S | null;
  /** For SQS-compatible servers; null: AWS's endpoint for the region. */
  endpointUrl: string | null;
  /** For FIFO queues (`.fifo`): the MessageGroupId. */
  key: MessageKey;
}

export type BrokerDestination<S = string> = KafkaDestination<S> | RabbitmqDestination<S> | SqsDestination<S>;
