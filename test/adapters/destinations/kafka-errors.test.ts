import { createRequire } from "node:module";
import {
  KafkaJSConnectionError,
  KafkaJSMetadataNotLoaded,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSRequestTimeoutError,
  KafkaJSSASLAuthenticationError,
} from "kafkajs";
import { describe, expect, it } from "vitest";
import { BlockedAddressError } from "../../../src/adapters/delivery/guarded-lookup.ts";
import { classifyKafkaFailure, failsTheCluster } from "../../../src/adapters/destinations/kafka-errors.ts";
import { withoutSecrets } from "../../../src/adapters/destinations/message-headers.ts";

// Which code a kafkajs failure becomes, built the way kafkajs builds them: a broker's error code through
// kafkajs's own table (createErrorFromCode), wrapped as its retrier wraps the last failure. The real
// broker shows the common ones (test/destinations/); these are the ones it cannot be made to answer.
type ProtocolErrorShape = { type: string; code: number; retriable: boolean; message: string };
const { createErrorFromCode } = createRequire(import.meta.url)("kafkajs/src/protocol/error.js") as {
  createErrorFromCode: (code: number) => ProtocolErrorShape;
};
const protocol = (code: number) => new KafkaJSProtocolError(createErrorFromCode(code) as never);
const exhausted = (e: Error) => new KafkaJSNumberOfRetriesExceeded(e, { retryCount: 2, retryTime: 600 });
const socketError = (message: string, code?: string) =>
  new KafkaJSConnectionError(`Connection error: ${message}`, {
    broker: "b1:9092",
    ...(code ? { code } : {}),
  });

describe("classifyKafkaFailure", () => {
  it.each([
    [
      "SASL refused (kafkajs's own error)",
      // Its declaration takes no arguments; kafkajs passes the message.
      new (KafkaJSSASLAuthenticationError as unknown as new (m: string) => Error)(
        "SASL PLAIN authentication failed",
      ),
    ],
    ["SASL_AUTHENTICATION_FAILED (58)", exhausted(protocol(58))],
    ["TOPIC_AUTHORIZATION_FAILED (29)", protocol(29)],
    ["CLUSTER_AUTHORIZATION_FAILED (31)", protocol(31)],
    ["UNSUPPORTED_SASL_MECHANISM (33)", protocol(33)],
  ])("%s is auth_error", (_what, err) => {
    expect(classifyKafkaFailure(err)).toBe("auth_error");
  });

  it.each([
    [
      "UNKNOWN_TOPIC_OR_PARTITION after the metadata retries",
      exhausted(protocol(3)),
      "destination_not_found",
    ],
    ["MESSAGE_TOO_LARGE (10)", protocol(10), "message_too_large"],
    ["RECORD_LIST_TOO_LARGE (18)", exhausted(protocol(18)), "message_too_large"],
    ["REQUEST_TIMED_OUT (7)", exhausted(protocol(7)), "timeout"],
    [
      "a request kafkajs timed out",
      exhausted(new KafkaJSRequestTimeoutError("Request Produce timed out")),
      "timeout",
    ],
    ["INVALID_RECORD (87)", protocol(87), "broker_rejected"],
    ["CORRUPT_MESSAGE (2)", protocol(2), "broker_rejected"],
    ["NOT_ENOUGH_REPLICAS (19) after retries", exhausted(protocol(19)), "connection_error"],
    ["LEADER_NOT_AVAILABLE (5) after retries", exhausted(protocol(5)), "connection_error"],
    ["NOT_LEADER_FOR_PARTITION (6) after retries", exhausted(protocol(6)), "connection_error"],
    ["LISTENER_NOT_FOUND (72)", exhausted(protocol(72)), "connection_error"],
    ["KAFKA_STORAGE_ERROR (56)", exhausted(protocol(56)), "connection_error"],
    [
      "connection refused",
      exhausted(socketError("connect ECONNREFUSED 10.0.0.1:9092", "ECONNREFUSED")),
      "connection_error",
    ],
    ["an unknown host", exhausted(socketError("getaddrinfo ENOTFOUND b1", "ENOTFOUND")), "dns_error"],
    [
      "an untrusted certificate",
      socketError("unable to verify the first certificate", "UNABLE_TO_VERIFY_LEAF_SIGNATURE"),
      "tls_error",
    ],
    ["a handshake cut short", socketError("socket disconnected", "ERR_TLS_HANDSHAKE_FAILED"), "tls_error"],
    ["kafkajs's connect timeout", exhausted(socketError("Connection timeout")), "timeout"],
    ["a closed connection", new KafkaJSConnectionError("Closed connection"), "connection_error"],
    [
      "a refused address",
      exhausted(socketError(new BlockedAddressError("b1", "10.0.0.1").message, "EBLOCKEDADDRESS")),
      "blocked_address",
    ],
    [
      "the producer disconnected",
      new KafkaJSNonRetriableError("The producer is disconnected"),
      "connection_error",
    ],
    ["something else entirely", new Error("boom"), "connection_error"],
  ] as const)("%s is %s", (_what, err, code) => {
    expect(classifyKafkaFailure(err)).toBe(code);
  });

  it("reads the innermost reason, not the retry wrapper's message", () => {
    const wrapped = exhausted(protocol(3));
    expect(wrapped.name).toBe("KafkaJSNumberOfRetriesExceeded");
    expect(classifyKafkaFailure(wrapped)).toBe("destination_not_found");
  });
});

describe("withoutSecrets", () => {
  it("cuts every occurrence of each secret out of a message", () => {
    expect(withoutSecrets("bad s3cr3t, again s3cr3t; user herald", ["s3cr3t", "", "absent"])).toBe(
      "bad ********, again ********; user herald",
    );
  });
});

// Whether a request for several topics that failed is the cluster's failure (every record fails) or one
// topic's, so that kafka-batch.ts sends each topic's records again on their own.
describe("failsTheCluster", () => {
  it.each([
    ["a refused connection, after retries", exhausted(socketError("connect ECONNREFUSED", "ECONNREFUSED"))],
    [
      "a request that timed out",
      new KafkaJSRequestTimeoutError("Request Produce(key: 0, version: 3) timed out"),
    ],
    ["SASL refused", exhausted(protocol(58))],
    ["CLUSTER_AUTHORIZATION_FAILED (31)", protocol(31)],
  ])("%s fails every topic", (_, err) => {
    expect(failsTheCluster(err)).toBe(true);
  });

  it.each([
    ["UNKNOWN_TOPIC_OR_PARTITION (3), after retries", exhausted(protocol(3))],
    ["TOPIC_AUTHORIZATION_FAILED (29)", protocol(29)],
    ["NOT_ENOUGH_REPLICAS (19), after retries", exhausted(protocol(19))],
    ["MESSAGE_TOO_LARGE (10)", protocol(10)],
    [
      "no metadata for a topic",
      new (KafkaJSMetadataNotLoaded as unknown as new (m: string) => Error)(
        "Producing to topic without metadata",
      ),
    ],
  ])("%s is one topic's, tried again alone", (_, err) => {
    expect(failsTheCluster(err)).toBe(false);
  });
});
