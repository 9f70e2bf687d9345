import { describe, expect, it } from "vitest";
import type {
  BrokerDestination,
  KafkaDestination,
  RabbitmqDestination,
  SqsDestination,
} from "../../src/domain/destination.ts";
import {
  credentialIssues,
  destinationIssues,
  splitAmqpUrl,
  splitHostPort,
  sqsAttributeIssues,
} from "../../src/domain/destination-rules.ts";
import {
  CREDENTIAL_MASK,
  destinationUrl,
  givenCredentials,
  mapCredentials,
  maskedDestination,
  mergeDestination,
} from "../../src/domain/destination-values.ts";

const open = { allowHttp: false, allowPrivateNetworks: false };
const kafka: KafkaDestination = {
  kind: "kafka",
  brokers: ["b1.example.com:9092", "b2.example.com:9093"],
  topic: "orders",
  key: "resource",
  tls: true,
  sasl: { mechanism: "scram-sha-512", username: "herald", password: "kafka-pass-1" },
};
const rabbit: RabbitmqDestination = {
  kind: "rabbitmq",
  url: "amqps://herald@mq.example.com/prod",
  password: "amqp-pass-1",
  exchange: "events",
  routingKey: "orders",
};
const sqs: SqsDestination = {
  kind: "sqs",
  queueUrl: "https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo",
  region: "eu-west-1",
  accessKeyId: "AKIAIOSFODNN7EXAMPLE",
  secretAccessKey: "sqs-secret-1",
  sessionToken: null,
  endpointUrl: null,
  key: "endpoint",
};
const paths = (d: BrokerDestination, policy = open) => destinationIssues(d, policy).map((i) => i.path);

describe("destination rules (ADR 27)", () => {
  it("accepts well-formed destinations of each kind", () => {
    expect(paths(kafka)).toEqual([]);
    expect(paths(rabbit)).toEqual([]);
    expect(paths(sqs)).toEqual([]);
  });

  it("checks Kafka's brokers (1-10 host:port) and topic rule", () => {
    expect(paths({ ...kafka, brokers: [] })).toEqual(["kafka.brokers"]);
    expect(
      paths({ ...kafka, brokers: Array.from({ length: 11 }, (_, i) => `b${i}.example.com:9092`) }),
    ).toEqual(["kafka.brokers"]);
    expect(
      paths({ ...kafka, brokers: ["b1.example.com", "b2:0", "b3:65536", "[2001:db8::1]:9092x"] }),
    ).toEqual(["kafka.brokers.0", "kafka.brokers.1", "kafka.brokers.2", "kafka.brokers.3"]);
    expect(paths({ ...kafka, brokers: ["b1.example.com:9092", "B1.example.com:9092"] })).toEqual([
      "kafka.brokers.1",
    ]);
    for (const topic of ["", ".", "..", "a b", "x".repeat(250), "orders/1"])
      expect(paths({ ...kafka, topic })).toEqual(["kafka.topic"]);
    for (const topic of ["a", "...", "Orders_v2.eu-1", "x".repeat(249)])
      expect(paths({ ...kafka, topic })).toEqual([]);
    expect(paths({ ...kafka, tls: { ca: "not a pem" } })).toEqual(["kafka.tls.ca"]);
    expect(paths({ ...kafka, sasl: { mechanism: "plain", username: "", password: "p" } })).toEqual([
      "kafka.sasl.username",
    ]);
  });

  it("refuses broker hosts that are non-public IP literals unless private networks are allowed", () => {
    const priv = { ...kafka, brokers: ["127.0.0.1:9092", "[::1]:9092", "10.1.2.3:9092", "8.8.8.8:9092"] };
    expect(paths(priv)).toEqual(["kafka.brokers.0", "kafka.brokers.1", "kafka.brokers.2"]);
    expect(paths(priv, { allowHttp: false, allowPrivateNetworks: true })).toEqual([]);
    expect(paths({ ...rabbit, url: "amqp://u@192.168.1.5:5672/" })).toEqual(["rabbitmq.url"]);
    expect(paths({ ...rabbit, url: "amqp://u@[::1]:5672/" })).toEqual(["rabbitmq.url"]);
    expect(paths({ ...sqs, queueUrl: "https://127.0.0.1/1/q" })).toEqual(["sqs.queue_url"]);
    expect(paths({ ...sqs, endpointUrl: "https://169.254.169.254/" })).toEqual(["sqs.endpoint_url"]);
  });

  it("splits host:port, IPv6 in brackets", () => {
    expect(splitHostPort("b1:9092")).toEqual({ host: "b1", port: 9092 });
    expect(splitHostPort("[2001:db8::1]:9092")).toEqual({ host: "2001:db8::1", port: 9092 });
    expect(splitHostPort("2001:db8::1:9092")).toBeNull();
    expect(splitHostPort("user@b1:9092")).toBeNull();
  });

  it("checks RabbitMQ's url, exchange and routing key (255 bytes)", () => {
    expect(paths({ ...rabbit, url: "https://mq.example.com" })).toEqual(["rabbitmq.url"]);
    expect(paths({ ...rabbit, url: "amqps://mq.example.com/prod?heartbeat=5" })).toEqual(["rabbitmq.url"]);
    expect(paths({ ...rabbit, exchange: "bad exchange" })).toEqual(["rabbitmq.exchange"]);
    expect(paths({ ...rabbit, exchange: "" })).toEqual([]);
    expect(paths({ ...rabbit, routingKey: "é".repeat(128) })).toEqual(["rabbitmq.routing_key"]);
    expect(paths({ ...rabbit, routingKey: "k".repeat(255) })).toEqual([]);
  });

  it("takes the password out of an AMQP URL", () => {
    expect(splitAmqpUrl("amqps://herald:p%40ss@mq.example.com:5671/prod")).toEqual({
      url: "amqps://herald@mq.example.com:5671/prod",
      password: "p@ss",
    });
    expect(splitAmqpUrl("amqp://mq.example.com")).toEqual({ url: "amqp://mq.example.com", password: null });
    expect(splitAmqpUrl("mq.example.com")).toMatchObject({ path: "rabbitmq.url" });
  });

  it("checks SQS's queue URL, region and key id; http only when allowed", () => {
    expect(paths({ ...sqs, queueUrl: "https://sqs.example.com/orders" })).toEqual(["sqs.queue_url"]);
    expect(paths({ ...sqs, queueUrl: "http://sqs.example.com/1/orders" })).toEqual(["sqs.queue_url"]);
    expect(
      paths({ ...sqs, queueUrl: "http://sqs.example.com/1/orders" }, { ...open, allowHttp: true }),
    ).toEqual([]);
    expect(paths({ ...sqs, region: "EU west" })).toEqual(["sqs.region"]);
    expect(paths({ ...sqs, accessKeyId: "AKIA/bad" })).toEqual(["sqs.access_key_id"]);
  });

  it("keeps SQS message attributes within AWS's rules: 7 custom headers beside the 3 signature ones", () => {
    expect(sqsAttributeIssues(["X-Api-Key", "tenant_id", "a.b"])).toEqual([]);
    expect(sqsAttributeIssues(Array.from({ length: 7 }, (_, i) => `h${i}`))).toEqual([]);
    expect(sqsAttributeIssues(Array.from({ length: 8 }, (_, i) => `h${i}`)).map((i) => i.path)).toEqual([
      "headers",
    ]);
    const bad = [".a", "a.", "a..b", "AWS.x", "aws.y", "Amazon.z", "AMAZON.w", "bad!name"];
    expect(sqsAttributeIssues(bad.slice(0, 4)).map((i) => i.path)).toEqual(
      bad.slice(0, 4).map((n) => `headers.${n}`),
    );
    expect(sqsAttributeIssues(bad.slice(4)).map((i) => i.path)).toEqual(
      bad.slice(4).map((n) => `headers.${n}`),
    );
  });

  it("refuses empty, huge or masked credentials", () => {
    expect(credentialIssues("", "p")).toHaveLength(1);
    expect(credentialIssues("x".repeat(4097), "p")).toHaveLength(1);
    expect(credentialIssues(CREDENTIAL_MASK, "p")).toHaveLength(1);
    expect(credentialIssues("s3cret", "p")).toEqual([]);
  });
});

describe("destination values", () => {
  it("derives a url without credentials", () => {
    expect(destinationUrl(kafka)).toBe("kafka://b1.example.com:9092,b2.example.com:9093/orders");
    expect(destinationUrl(rabbit)).toBe(
      "amqps://herald@mq.example.com/prod?exchange=events&routing_key=orders",
    );
    expect(destinationUrl({ ...rabbit, exchange: "", routingKey: "a b&c" })).toBe(
      "amqps://herald@mq.example.com/prod?exchange=&routing_key=a%20b%26c",
    );
    expect(destinationUrl(sqs)).toBe(sqs.queueUrl);
    for (const d of [kafka, rabbit, sqs]) expect(destinationUrl(d)).not.toMatch(/pass-1|secret-1/);
  });

  it("masks every credential and only credentials", () => {
    const shown = JSON.stringify([kafka, rabbit, { ...sqs, sessionToken: "tok-1" }].map(maskedDestination));
    expect(shown).not.toMatch(/pass-1|secret-1|tok-1/);
    expect(maskedDestination(kafka)).toMatchObject({
      sasl: { username: "herald", password: CREDENTIAL_MASK },
    });
    expect(maskedDestination({ ...rabbit, password: null })).toMatchObject({ password: null });
    expect(maskedDestination(sqs)).toMatchObject({ accessKeyId: sqs.accessKeyId, sessionToken: null });
  });

  it("maps credentials (sealing) without touching other fields", async () => {
    const sealed = await mapCredentials(kafka, async (p) => `sealed(${p})`);
    expect(sealed).toEqual({ ...kafka, sasl: { ...kafka.sasl!, password: "sealed(kafka-pass-1)" } });
    const s = await mapCredentials({ ...sqs, sessionToken: "t" }, (p) => p.toUpperCase());
    expect([s.kind === "sqs" && s.secretAccessKey, s.kind === "sqs" && s.sessionToken]).toEqual([
      "SQS-SECRET-1",
      "T",
    ]);
  });

  it("merges a change: absent fields and credentials kept, given ones set, null clears", () => {
    const wrap = (p: string) => `new:${p}`;
    expect(mergeDestination(kafka, { kind: "kafka", topic: "t2" }, wrap)).toEqual({ ...kafka, topic: "t2" });
    expect(mergeDestination(kafka, { kind: "kafka", sasl: { username: "u2" } }, wrap)).toEqual({
      ...kafka,
      sasl: { ...kafka.sasl!, username: "u2" },
    });
    expect(mergeDestination(kafka, { kind: "kafka", sasl: null }, wrap)).toEqual({ ...kafka, sasl: null });
    expect(
      mergeDestination({ ...kafka, sasl: null }, { kind: "kafka", sasl: { username: "u" } }, wrap),
    ).toEqual({
      missing: ["kafka.sasl.mechanism", "kafka.sasl.username", "kafka.sasl.password"],
    });
    expect(mergeDestination(rabbit, { kind: "rabbitmq", password: "p2" }, wrap)).toEqual({
      ...rabbit,
      password: "new:p2",
    });
    expect(mergeDestination(rabbit, { kind: "rabbitmq", password: null }, wrap)).toEqual({
      ...rabbit,
      password: null,
    });
    expect(
      mergeDestination(sqs, { kind: "sqs", sessionToken: "t", endpointUrl: "https://x.example" }, wrap),
    ).toEqual({
      ...sqs,
      sessionToken: "new:t",
      endpointUrl: "https://x.example",
    });
    expect(() => mergeDestination(sqs, { kind: "kafka", topic: "x" }, wrap)).toThrow();
  });

  it("lists the plain credentials a change gives, by path", () => {
    expect(givenCredentials({ kind: "kafka", sasl: { password: "x" } })).toEqual([
      ["kafka.sasl.password", "x"],
    ]);
    expect(givenCredentials({ kind: "rabbitmq", password: null })).toEqual([]);
    expect(givenCredentials(sqs)).toEqual([["sqs.secret_access_key", "sqs-secret-1"]]);
  });
});
