// One Kafka cluster connection as the Kafka sender pools it (ADR 27, "Connections"): a kafkajs client
// and its idempotent producer, made from an endpoint's brokers, TLS and SASL, with the batcher that
// gathers every record for that cluster into one request at a time.
import {
  Kafka,
  type KafkaConfig,
  type logCreator,
  logLevel,
  type Message,
  Partitioners,
  type Producer,
} from "kafkajs";
import type { Logger } from "../../app/logger.ts";
import type { KafkaDestination } from "../../domain/destination.ts";
import { KafkaBatcher, recordingPartitioner } from "./kafka-batch.ts";
import { classifyKafkaFailure, failsTheCluster } from "./kafka-errors.ts";
import { type guardedSocketFactory, kafkajsBroker } from "./kafka-socket.ts";
import { withoutSecrets } from "./message-headers.ts";

export interface OpenedProducer {
  producer: Producer;
  /** Sends the records that wait while a request is in flight together, in the next one, whatever their topic. */
  batcher: KafkaBatcher;
  /** Settles when the producer is connected. */
  ready: Promise<void>;
}

export interface ProducerOptions {
  socketFactory: ReturnType<typeof guardedSocketFactory>;
  /** The attempt timeout: kafkajs's request timeout, and its connect and SASL ones within it. */
  timeoutMs: number;
  logger: Logger | undefined;
  /** The endpoints using the connection when kafkajs logs, named in its log lines. */
  endpointIds: () => string[];
}

/** What makes two endpoints' connections the same: brokers, TLS and SASL (the topic and key are per record). */
export function connectionKey(destination: KafkaDestination<string>): string {
  return JSON.stringify([destination.brokers, destination.tls, destination.sasl]);
}

/** Starts connecting an idempotent producer (`acks: -1` on every send) to the destination's cluster. */
export function openProducer(
  destination: KafkaDestination<string>,
  options: ProducerOptions,
): OpenedProducer {
  const secrets = destination.sasl ? [destination.sasl.password] : [];
  const chosen = new WeakMap<Message, number>();
  const kafka = new Kafka({
    clientId: "herald",
    brokers: destination.brokers.map(kafkajsBroker),
    ssl: destination.tls === true ? true : destination.tls === false ? false : { ca: destination.tls.ca },
    sasl: saslOf(destination),
    socketFactory: options.socketFactory,
    connectionTimeout: Math.min(3_000, options.timeoutMs),
    authenticationTimeout: Math.min(10_000, options.timeoutMs),
    requestTimeout: options.timeoutMs,
    retry: { retries: 2 },
    logLevel: logLevel.WARN,
    logCreator: kafkaLogs(options.logger, options.endpointIds, secrets),
  });
  const producer = kafka.producer({
    idempotent: true,
    // kafkajs's idempotence keeps one produce per broker in flight; 1 says so and keeps order per key.
    maxInFlightRequests: 1,
    retry: { retries: 2 },
    // A topic that does not exist is the endpoint's mistake to fix, never one for Herald to create.
    allowAutoTopicCreation: false,
    createPartitioner: () => recordingPartitioner(Partitioners.DefaultPartitioner(), chosen),
  });
  const batcher = new KafkaBatcher(
    (topicMessages) => producer.sendBatch({ topicMessages, acks: -1 }),
    chosen,
    {
      tooLarge: (err) => classifyKafkaFailure(err) === "message_too_large",
      whole: failsTheCluster,
    },
  );
  return { producer, batcher, ready: producer.connect() };
}

function saslOf(destination: KafkaDestination<string>): KafkaConfig["sasl"] {
  const sasl = destination.sasl;
  if (!sasl) return undefined;
  const { username, password } = sasl;
  if (sasl.mechanism === "plain") return { mechanism: "plain", username, password };
  if (sasl.mechanism === "scram-sha-256") return { mechanism: "scram-sha-256", username, password };
  return { mechanism: "scram-sha-512", username, password };
}

/**
 * kafkajs's log lines, as debug lines of Herald's logger with the password cut out: kafkajs logs every
 * retry of an unreachable broker as an error, which is an ordinary failed attempt to Herald (recorded).
 */
function kafkaLogs(logger: Logger | undefined, endpointIds: () => string[], secrets: string[]): logCreator {
  return () =>
    ({ namespace, log }) => {
      if (!logger) return;
      logger.debug("kafkajs", {
        endpoint_ids: endpointIds(),
        namespace,
        message: withoutSecrets(String(log.message), secrets),
        ...(typeof log.broker === "string" ? { broker: log.broker } : {}),
      });
    };
}
