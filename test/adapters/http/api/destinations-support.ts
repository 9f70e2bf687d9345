import { makeApiHarness } from "../../../support/api-harness.ts";

// What the broker endpoint API tests share: a body of each kind, and an in-process app with a token.
export const SASL_PASSWORD = "kafka-sasl-pw-5c1e9a";
export const AMQP_PASSWORD = "amqp-pw-7d22b0";
export const SQS_SECRET = "sqs-secret-key-3f8e11";
export const SQS_TOKEN = "sqs-session-token-a9b4c2";
export const CREDENTIALS = [SASL_PASSWORD, AMQP_PASSWORD, SQS_SECRET, SQS_TOKEN];

export const kafkaBody = {
  kind: "kafka",
  events: ["message.delivered"],
  kafka: {
    brokers: ["b1.example.com:9092", "b2.example.com:9092"],
    topic: "orders",
    sasl: { mechanism: "scram-sha-256", username: "herald", password: SASL_PASSWORD },
  },
};
export const rabbitmqBody = {
  kind: "rabbitmq",
  events: ["message.delivered"],
  rabbitmq: {
    url: `amqps://herald:${AMQP_PASSWORD}@mq.example.com/prod`,
    exchange: "events",
    routing_key: "orders",
  },
};
export const sqsBody = {
  kind: "sqs",
  events: ["message.delivered"],
  headers: { "X-Tenant": "t1" },
  sqs: {
    queue_url: "https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo",
    region: "eu-west-1",
    access_key_id: "AKIAIOSFODNN7EXAMPLE",
    secret_access_key: SQS_SECRET,
    session_token: SQS_TOKEN,
  },
};

export async function harness() {
  const h = await makeApiHarness();
  const { token } = await h.newToken();
  const call = async (method: string, path: string, json?: unknown) => {
    const init: RequestInit = { method, headers: { Authorization: `Bearer ${token}` } };
    if (json !== undefined) {
      init.body = JSON.stringify(json);
      (init.headers as Record<string, string>)["Content-Type"] = "application/json";
    }
    const res = await h.fetch(new Request(`${h.baseUrl}${path}`, init));
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : null };
  };
  return { h, call };
}
