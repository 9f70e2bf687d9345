import type { SendError } from "../../domain/delivery.ts";
import { classifyFailure } from "../delivery/classify.ts";

// Kafka protocol error types (kafkajs's `type` on a KafkaJSProtocolError) that name the reason.
const AUTH_TYPES = new Set([
  "SASL_AUTHENTICATION_FAILED",
  "ILLEGAL_SASL_STATE",
  "UNSUPPORTED_SASL_MECHANISM",
  "TOPIC_AUTHORIZATION_FAILED",
  "CLUSTER_AUTHORIZATION_FAILED",
  "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
]);
const NOT_FOUND_TYPES = new Set(["UNKNOWN_TOPIC_OR_PARTITION", "UNKNOWN_TOPIC_ID"]);
const TOO_LARGE_TYPES = new Set(["MESSAGE_TOO_LARGE", "RECORD_LIST_TOO_LARGE"]);
// Retriable in kafkajs's table, yet about the record's bytes rather than the cluster's state.
const REJECTED_TYPES = new Set(["CORRUPT_MESSAGE"]);
// kafkajs's names for failures of the connection rather than of the request; classify.ts reads their codes.
const CONNECTION_NAMES = new Set([
  "KafkaJSConnectionError",
  "KafkaJSConnectionClosedError",
  "KafkaJSBrokerNotFound",
  "KafkaJSNoBrokerAvailableError",
]);

/** The error and what it wraps (kafkajs's retry wrapper keeps the last failure as `cause`), outermost first. */
function* chain(err: unknown, depth = 0): Generator<Record<string, unknown>> {
  if (typeof err !== "object" || err === null || depth > 8) return;
  const e = err as Record<string, unknown>;
  yield e;
  yield* chain(e.cause, depth + 1);
}

const text = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * Names a failed Kafka send (ADR 27's closed list): the innermost reason kafkajs gives wins over the
 * retry wrapper around it. SASL refusals are `auth_error`; an unknown topic after kafkajs's metadata
 * retries is `destination_not_found`; a record over the broker's limit is `message_too_large`; any other
 * answer refusing the record is `broker_rejected`, one saying the cluster cannot take records now (kafkajs
 * marks it retriable: no leader, too few replicas) is `connection_error`; connection failures are named from their
 * socket codes as HTTPS ones are (`connection_error`, `dns_error`, `tls_error`, `blocked_address`, `timeout`).
 */
export function classifyKafkaFailure(err: unknown): SendError {
  const errors = [...chain(err)].reverse();
  for (const e of errors) {
    const name = text(e.name);
    const type = text(e.type);
    if (name === "KafkaJSSASLAuthenticationError" || AUTH_TYPES.has(type)) return "auth_error";
    if (NOT_FOUND_TYPES.has(type)) return "destination_not_found";
    if (TOO_LARGE_TYPES.has(type)) return "message_too_large";
    if (type === "REQUEST_TIMED_OUT" || name === "KafkaJSRequestTimeoutError") return "timeout";
    if (name === "KafkaJSProtocolError" || (type !== "" && name.startsWith("KafkaJS"))) {
      // A retriable answer still failing after kafkajs's retries (no leader, too few in-sync replicas,
      // a storage error, no listener for this address) says the cluster cannot take records now, as a
      // broker that went away cannot: connection_error. Only a refusal of the record is broker_rejected.
      return e.retriable === true && !REJECTED_TYPES.has(type) ? "connection_error" : "broker_rejected";
    }
    if (CONNECTION_NAMES.has(name)) return classifyFailure(e);
  }
  return classifyFailure(err);
}

// Broker answers about the whole connection, not about one topic of the request.
const CLUSTER_TYPES = new Set([
  "SASL_AUTHENTICATION_FAILED",
  "ILLEGAL_SASL_STATE",
  "UNSUPPORTED_SASL_MECHANISM",
  "CLUSTER_AUTHORIZATION_FAILED",
  "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
]);

/**
 * Is this failed produce the whole cluster's (unreachable, timed out, credentials refused) rather than
 * something about one of its topics or partitions (unknown, forbidden, no leader, refused records)? A
 * request for several topics that failed for one of them is sent again topic by topic (kafka-batch.ts).
 */
export function failsTheCluster(err: unknown): boolean {
  for (const e of chain(err)) {
    const type = text(e.type);
    if (text(e.name) === "KafkaJSMetadataNotLoaded") return false;
    if (type !== "" && !CLUSTER_TYPES.has(type)) return false;
  }
  return true;
}
