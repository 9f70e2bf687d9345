import { describe, expect, it } from "vitest";
import {
  AMQP_PASSWORD,
  CREDENTIALS,
  harness,
  kafkaBody,
  rabbitmqBody,
  sqsBody,
} from "./destinations-support.ts";

// Broker endpoints through the API (ADR 27): each kind created, read, listed and patched; credentials
// never in an answer, a list or a log line. Bad inputs: destinations-refusals.test.ts.
const expectNoCredential = (...texts: string[]) => {
  for (const t of texts) for (const c of CREDENTIALS) expect(t).not.toContain(c);
};

describe("broker endpoints through the API", () => {
  it("creates a Kafka endpoint: kind, derived url, the object with its password masked, defaults applied", async () => {
    const { call } = await harness();
    const created = await call("POST", "/api/v1/webhooks", kafkaBody);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      kind: "kafka",
      url: "kafka://b1.example.com:9092,b2.example.com:9092/orders",
      kafka: {
        brokers: ["b1.example.com:9092", "b2.example.com:9092"],
        topic: "orders",
        key: "resource",
        tls: true,
        sasl: { mechanism: "scram-sha-256", username: "herald", password: "********" },
      },
    });
    expect(created.body.secret).toMatch(/^whsec_/);
    expectNoCredential(created.text);
  });

  it("creates a RabbitMQ endpoint: the password taken out of the url, sealed, and masked", async () => {
    const { h, call } = await harness();
    const created = await call("POST", "/api/v1/webhooks", rabbitmqBody);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      kind: "rabbitmq",
      url: "amqps://herald@mq.example.com/prod?exchange=events&routing_key=orders",
      rabbitmq: {
        url: "amqps://herald@mq.example.com/prod",
        password: "********",
        exchange: "events",
        routing_key: "orders",
      },
    });
    const [stored] = await h.repos.endpoints.getMany([created.body.id]);
    const d = stored!.destination!;
    expect(d.kind === "rabbitmq" && d.password).toMatch(/^v1\./);
    expect(JSON.stringify(stored)).not.toContain(AMQP_PASSWORD);
    expectNoCredential(created.text);
  });

  it("creates an SQS endpoint: the queue URL as url, key id shown, secret and token masked", async () => {
    const { call } = await harness();
    const created = await call("POST", "/api/v1/webhooks", sqsBody);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      kind: "sqs",
      url: sqsBody.sqs.queue_url,
      headers: { "X-Tenant": "********" },
      sqs: {
        queue_url: sqsBody.sqs.queue_url,
        region: "eu-west-1",
        access_key_id: "AKIAIOSFODNN7EXAMPLE",
        secret_access_key: "********",
        session_token: "********",
        endpoint_url: null,
        key: "resource",
      },
    });
    expectNoCredential(created.text);
  });

  it("answers kind https and no destination object for an HTTPS endpoint, kind given or not", async () => {
    const { call } = await harness();
    for (const extra of [{}, { kind: "https" }]) {
      const created = await call("POST", "/api/v1/webhooks", {
        url: "https://receiver.example.com/h",
        events: ["message.sent"],
        ...extra,
      });
      expect(created.status).toBe(201);
      expect(created.body.kind).toBe("https");
      expect(Object.keys(created.body)).not.toContain("kafka");
    }
  });

  it("shows every kind in GET, the list and its pages, never a credential, nor in any log line", async () => {
    const { h, call } = await harness();
    const ids: string[] = [];
    for (const b of [kafkaBody, rabbitmqBody, sqsBody])
      ids.push((await call("POST", "/api/v1/webhooks", b)).body.id);
    const gets = await Promise.all(ids.map((id) => call("GET", `/api/v1/webhooks/${id}`)));
    expect(gets.map((g) => g.body.kind)).toEqual(["kafka", "rabbitmq", "sqs"]);
    const list = await call("GET", "/api/v1/webhooks");
    expect(list.body.data.map((w: { kind: string }) => w.kind)).toEqual(["sqs", "rabbitmq", "kafka"]);
    const page1 = await call("GET", "/api/v1/webhooks?limit=1");
    const page2 = await call("GET", `/api/v1/webhooks?limit=1&cursor=${page1.body.next_cursor}`);
    expect(page2.body.data[0].kind).toBe("rabbitmq");
    expectNoCredential(...gets.map((g) => g.text), list.text, page1.text, page2.text);
    expect(h.logLines.length).toBeGreaterThan(5);
    expectNoCredential(h.logLines.join("\n"));
  });

  it("PATCH merges the kind's object: fields given are set, credentials left out are kept, null clears", async () => {
    const { h, call } = await harness();
    const k = (await call("POST", "/api/v1/webhooks", kafkaBody)).body;
    const patched = await call("PATCH", `/api/v1/webhooks/${k.id}`, {
      kind: "kafka",
      kafka: { topic: "orders.v2", sasl: { username: "herald2" } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      url: "kafka://b1.example.com:9092,b2.example.com:9092/orders.v2",
      kafka: {
        topic: "orders.v2",
        sasl: { mechanism: "scram-sha-256", username: "herald2", password: "********" },
      },
    });
    const [stored] = await h.repos.endpoints.getMany([k.id]);
    const before = stored!.destination;
    expect(before?.kind === "kafka" && before.sasl?.password).toMatch(/^v1\./);
    const off = await call("PATCH", `/api/v1/webhooks/${k.id}`, { kafka: { sasl: null, tls: false } });
    expect(off.body.kafka).toMatchObject({ sasl: null, tls: false });

    const s = (await call("POST", "/api/v1/webhooks", sqsBody)).body;
    const s2 = await call("PATCH", `/api/v1/webhooks/${s.id}`, {
      sqs: { session_token: null, region: "us-east-1", endpoint_url: "https://sqs.example.com" },
    });
    expect(s2.status).toBe(200);
    expect(s2.body.sqs).toMatchObject({
      region: "us-east-1",
      secret_access_key: "********",
      session_token: null,
      endpoint_url: "https://sqs.example.com",
    });
    const r = (await call("POST", "/api/v1/webhooks", rabbitmqBody)).body;
    const r2 = await call("PATCH", `/api/v1/webhooks/${r.id}`, {
      rabbitmq: { routing_key: "audit" },
      description: "x",
    });
    expect(r2.body.url).toBe("amqps://herald@mq.example.com/prod?exchange=events&routing_key=audit");
    expect(r2.body.rabbitmq.password).toBe("********");
    expectNoCredential(patched.text, off.text, s2.text, r2.text, h.logLines.join("\n"));
  });
});
