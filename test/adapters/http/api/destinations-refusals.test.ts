import { describe, expect, it } from "vitest";
import { harness, kafkaBody, rabbitmqBody, sqsBody } from "./destinations-support.ts";

// Every bad broker input is a 422 naming its path (ADR 27), quoting no credential, and changes nothing.
type Body = Record<string, unknown>;
const SECRET = "never-echo-this-9e1d";
const kafkaWith = (kafka: Body, extra: Body = {}) => ({
  ...kafkaBody,
  ...extra,
  kafka: { ...kafkaBody.kafka, ...kafka },
});
const rabbitWith = (rabbitmq: Body) => ({
  ...rabbitmqBody,
  rabbitmq: { ...rabbitmqBody.rabbitmq, ...rabbitmq },
});
const sqsWith = (sqs: Body, extra: Body = {}) => ({
  ...sqsBody,
  ...extra,
  sqs: { ...sqsBody.sqs, ...sqs, secret_access_key: SECRET },
});
const paths = (body: { errors?: { path: string }[] }) => (body.errors ?? []).map((e) => e.path);

const CREATE_CASES: [string, Body, string[]][] = [
  ["a url with a broker kind", { ...kafkaBody, url: "https://x.example.com/" }, ["body.url"]],
  ["an unknown kind", { ...kafkaBody, kind: "kinesis" }, ["body.kind"]],
  ["a kind without its object", { kind: "sqs", events: ["message.sent"] }, ["body.sqs"]],
  ["another kind's object", { ...kafkaBody, rabbitmq: rabbitmqBody.rabbitmq }, ["body.rabbitmq"]],
  ["no brokers", kafkaWith({ brokers: [] }), ["body.kafka.brokers"]],
  ["a broker without a port", kafkaWith({ brokers: ["b1.example.com"] }), ["body.kafka.brokers.0"]],
  [
    "a loopback broker",
    kafkaWith({ brokers: ["b1.example.com:9092", "127.0.0.1:9092"] }),
    ["body.kafka.brokers.1"],
  ],
  ["a private broker", kafkaWith({ brokers: ["[fd00::1]:9092"] }), ["body.kafka.brokers.0"]],
  ["a bad topic", kafkaWith({ topic: ".." }), ["body.kafka.topic"]],
  [
    "an unknown SASL mechanism",
    kafkaWith({ sasl: { mechanism: "gssapi", username: "u", password: SECRET } }),
    ["body.kafka.sasl.mechanism"],
  ],
  [
    "an empty SASL password",
    kafkaWith({ sasl: { mechanism: "plain", username: "u", password: "" } }),
    ["body.kafka.sasl.password"],
  ],
  [
    "the mask as a password",
    kafkaWith({ sasl: { mechanism: "plain", username: "u", password: "********" } }),
    ["body.kafka.sasl.password"],
  ],
  [
    "a client certificate on a broker endpoint",
    { ...kafkaBody, client_certificate: { certificate: "x", private_key: SECRET } },
    ["body.client_certificate"],
  ],
  ["an http url for RabbitMQ", rabbitWith({ url: "https://mq.example.com" }), ["body.rabbitmq.url"]],
  [
    "a private RabbitMQ host",
    rabbitWith({ url: `amqp://u:${SECRET}@10.0.0.5:5672/` }),
    ["body.rabbitmq.url"],
  ],
  ["a password twice", rabbitWith({ password: SECRET }), ["body.rabbitmq.password"]],
  ["a bad exchange", rabbitWith({ exchange: "with space" }), ["body.rabbitmq.exchange"]],
  [
    "a routing key over 255 bytes",
    rabbitWith({ routing_key: "é".repeat(128) }),
    ["body.rabbitmq.routing_key"],
  ],
  ["an http queue URL", sqsWith({ queue_url: "http://sqs.example.com/1/q" }), ["body.sqs.queue_url"]],
  [
    "a queue URL without account and name",
    sqsWith({ queue_url: "https://sqs.example.com/q" }),
    ["body.sqs.queue_url"],
  ],
  ["a loopback endpoint URL", sqsWith({ endpoint_url: "https://127.0.0.1:9324" }), ["body.sqs.endpoint_url"]],
  ["a bad region", sqsWith({ region: "EU 1" }), ["body.sqs.region"]],
  ["a bad key id", sqsWith({ access_key_id: "AK/IA" }), ["body.sqs.access_key_id"]],
  ["an unknown field", sqsWith({ queue: "x" }), ["body.sqs.queue"]],
  [
    "8 custom headers on SQS",
    sqsWith({}, { headers: Object.fromEntries([...Array(8)].map((_, i) => [`h${i}`, "v"])) }),
    ["body.headers"],
  ],
  ["an AWS. attribute name", sqsWith({}, { headers: { "AWS.Trace": "v" } }), ["body.headers.AWS.Trace"]],
];

describe("broker endpoints: refusals", () => {
  it.each(CREATE_CASES)(
    "POST /webhooks refuses %s with 422 at its path, quoting no credential",
    async (_, body, want) => {
      const { h, call } = await harness();
      const res = await call("POST", "/api/v1/webhooks", body);
      expect(res.status, res.text).toBe(422);
      expect(paths(res.body)).toEqual(want);
      expect(res.text).not.toContain(SECRET);
      expect(h.logLines.join("\n")).not.toContain(SECRET);
      expect((await call("GET", "/api/v1/webhooks")).body.data).toEqual([]);
    },
  );

  it("allows private broker addresses when the server allows private networks", async () => {
    const { makeApiHarness } = await import("../../../support/api-harness.ts");
    const h = await makeApiHarness({ allowPrivateNetworks: true });
    const { token } = await h.newToken();
    const res = await h.fetch(
      new Request(`${h.baseUrl}/api/v1/webhooks`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify(kafkaWith({ brokers: ["127.0.0.1:9092"] })),
      }),
    );
    expect(res.status).toBe(201);
  });

  it("PATCH refuses a change of kind, another kind's object, a url, and bad merged values, changing nothing", async () => {
    const { call } = await harness();
    const k = (await call("POST", "/api/v1/webhooks", kafkaBody)).body;
    const h = (
      await call("POST", "/api/v1/webhooks", { url: "https://r.example.com/", events: ["message.sent"] })
    ).body;
    const s = (await call("POST", "/api/v1/webhooks", sqsBody)).body;
    const cases: [string, Body, string[]][] = [
      [k.id, { kind: "sqs" }, ["body.kind"]],
      [h.id, { kind: "kafka", kafka: { topic: "t" } }, ["body.kind", "body.kafka"]],
      [k.id, { sqs: { region: "eu-west-2" } }, ["body.sqs"]],
      [k.id, { kafka: { topic: "a" }, rabbitmq: { exchange: "b" } }, ["body.kafka", "body.rabbitmq"]],
      [k.id, { url: "https://x.example.com/" }, ["body.url"]],
      [k.id, { kafka: { brokers: ["localhost"] } }, ["body.kafka.brokers.0"]],
      [k.id, { kafka: { sasl: null } }, []],
      [
        k.id,
        { kafka: { sasl: { username: "only" } } },
        ["body.kafka.sasl.mechanism", "body.kafka.sasl.username", "body.kafka.sasl.password"],
      ],
      [s.id, { headers: Object.fromEntries([...Array(7)].map((_, i) => [`h${i}`, "v"])) }, ["body.headers"]],
      [
        s.id,
        { sqs: { secret_access_key: "", region: "X" } },
        ["body.sqs.secret_access_key", "body.sqs.region"],
      ],
    ];
    for (const [id, body, want] of cases) {
      const before = (await call("GET", `/api/v1/webhooks/${id}`)).body;
      const res = await call("PATCH", `/api/v1/webhooks/${id}`, body);
      if (want.length === 0) {
        expect(res.status, JSON.stringify(body)).toBe(200);
        continue;
      }
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(paths(res.body), JSON.stringify(body)).toEqual(want);
      expect((await call("GET", `/api/v1/webhooks/${id}`)).body).toEqual(before);
    }
  });
});
