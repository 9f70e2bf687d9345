import { describe, expect, it } from "vitest";
import { createJsonLogger } from "../../../src/adapters/json-logger.ts";
import type { BrokerDeliveryRequest, BrokerSender } from "../../../src/app/ports/sending.ts";
import type { SendOutcome } from "../../../src/domain/delivery.ts";
import type { BrokerDestination } from "../../../src/domain/destination.ts";
import { SCOPE, sampleMessage } from "../../support/engine-harness.ts";
import { setup as startedHarness } from "./engine-suite.ts";

/** A BrokerSender double: records requests and releases, answers as scripted. */
function brokerDouble(script: (r: BrokerDeliveryRequest, n: number) => Partial<SendOutcome> = () => ({})) {
  const requests: BrokerDeliveryRequest[] = [];
  const released: string[] = [];
  let closed = 0;
  const sender: BrokerSender = {
    async send(r) {
      requests.push(r);
      const o = script(r, requests.length);
      const ok = o.ok ?? true;
      return {
        ok,
        responseStatus: null,
        responseBody: null,
        error: o.error ?? (ok ? null : "broker_rejected"),
        durationMs: 1,
        retryAfterMs: null,
        receipt:
          "receipt" in o ? o.receipt : ok ? { partition: 1, offset: String(40 + requests.length) } : null,
      };
    },
    async release(id) {
      released.push(id);
    },
    async close() {
      closed++;
    },
  };
  return { sender, requests, released, closed: () => closed };
}

const KAFKA_PASSWORD = "kafka-sasl-password-7f3a";
const kafka = (over: Partial<BrokerDestination & { kind: "kafka" }> = {}): BrokerDestination => ({
  kind: "kafka",
  brokers: ["b1.example.com:9092"],
  topic: "orders",
  key: "resource",
  tls: true,
  sasl: { mechanism: "plain", username: "herald", password: KAFKA_PASSWORD },
  ...over,
});

async function setup(kafkaSender?: BrokerSender, logLines?: string[]) {
  return startedHarness({
    brokers: kafkaSender ? { kafka: kafkaSender } : {},
    ...(logLines ? { logger: createJsonLogger("debug", (l) => logLines.push(l)) } : {}),
  });
}

describe("delivering to a broker endpoint (ADR 27)", () => {
  it("sends through the kind's sender with the opened credentials, key, version and event id, and records the receipt", async () => {
    const double = brokerDouble();
    const t = await setup(double.sender);
    const { endpoint, secret } = await t.endpoints.create(SCOPE, {
      events: ["message.delivered"],
      headers: { "X-Tenant": "t-1" },
      destination: kafka(),
    });
    expect(endpoint.url).toBe("kafka://b1.example.com:9092/orders");
    expect(JSON.stringify(endpoint)).not.toContain(KAFKA_PASSWORD);
    const published = await t.events.publish(SCOPE, { type: "message.delivered", data: sampleMessage() });
    await t.drain();
    expect(t.sender.requests).toHaveLength(0);
    expect(double.requests).toHaveLength(1);
    const r = double.requests[0]!;
    expect(r.destination).toEqual(kafka());
    expect(r.body).toBe(JSON.stringify(published.envelope));
    expect(r.eventId).toBe(published.envelope.id);
    expect(r.secrets).toEqual([secret]);
    expect(r.headers).toEqual([["X-Tenant", "t-1"]]);
    expect(r.endpointId).toBe(endpoint.id);
    expect(r.version).toBe(endpoint.updatedAt.getTime());
    expect(r.messageKey).toBe(published.envelope.resource_id);
    expect(r.deduplicationId).toBe(published.envelope.id);
    const [d] = await t.history(endpoint.id);
    expect(d).toMatchObject({
      status: "succeeded",
      responseStatus: null,
      receipt: { partition: 1, offset: "41" },
    });
    expect(d!.url).toBe(endpoint.url);
  });

  it("keys by the endpoint id when asked", async () => {
    const double = brokerDouble();
    const t = await setup(double.sender);
    const { endpoint } = await t.endpoints.create(SCOPE, {
      events: ["message.delivered"],
      destination: kafka({ key: "endpoint" }),
    });
    await t.events.publish(SCOPE, { type: "message.delivered", data: sampleMessage() });
    await t.drain();
    expect(double.requests[0]!.messageKey).toBe(endpoint.id);
  });

  it("retries a broker failure with backoff and records its code, no receipt", async () => {
    const double = brokerDouble((_, n) => (n === 1 ? { ok: false, error: "auth_error" } : {}));
    const t = await setup(double.sender);
    const { endpoint } = await t.endpoints.create(SCOPE, { events: ["message.sent"], destination: kafka() });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    let history = await t.history(endpoint.id);
    expect(history.map((d) => [d.attempt, d.status, d.error, d.receipt ?? null])).toEqual([
      [1, "failed", "auth_error", null],
      [2, "pending", null, null],
    ]);
    expect(history[1]!.scheduledAt.getTime() - history[0]!.attemptedAt!.getTime()).toBe(5_000);
    t.clock.advance(5_000);
    await t.drain();
    history = await t.history(endpoint.id);
    expect(history.map((d) => [d.attempt, d.status])).toEqual([
      [1, "failed"],
      [2, "succeeded"],
    ]);
    // Both attempts are automatic: the same deduplication id, so a FIFO queue drops a resend.
    expect(double.requests.map((r) => r.deduplicationId)).toEqual([
      double.requests[0]!.eventId,
      double.requests[0]!.eventId,
    ]);
  });

  it("gives a manual retry its own deduplication id, <event id>:<delivery id>", async () => {
    const double = brokerDouble((_, n) => (n === 1 ? { ok: false, error: "message_too_large" } : {}));
    const t = await setup(double.sender);
    const { endpoint } = await t.endpoints.create(SCOPE, { events: ["message.sent"], destination: kafka() });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    const [first] = await t.history(endpoint.id);
    const manual = await t.deliveries.retry(SCOPE, first!.id);
    await t.drain();
    const sent = double.requests.at(-1)!;
    expect(sent.deduplicationId).toBe(`${first!.eventId}:${manual.id}`);
    expect((await t.deliveries.get(SCOPE, manual.id)).status).toBe("succeeded");
  });

  it("releases the endpoint's producer when it is changed, disabled or deleted, and a change is a new version", async () => {
    const double = brokerDouble();
    const t = await setup(double.sender);
    const { endpoint } = await t.endpoints.create(SCOPE, { events: ["message.sent"], destination: kafka() });
    expect(double.released).toEqual([]);
    t.clock.advance(1_000);
    const changed = await t.endpoints.update(SCOPE, endpoint.id, {
      destination: { kind: "kafka", topic: "t2" },
    });
    expect(changed.url).toBe("kafka://b1.example.com:9092/t2");
    expect(double.released).toEqual([endpoint.id]);
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    expect(double.requests[0]!.version).toBe(changed.updatedAt.getTime());
    expect(double.requests[0]!.destination).toMatchObject({
      topic: "t2",
      sasl: { password: KAFKA_PASSWORD },
    });
    await t.endpoints.update(SCOPE, endpoint.id, { enabled: false });
    await t.endpoints.remove(SCOPE, endpoint.id);
    expect(double.released).toEqual([endpoint.id, endpoint.id, endpoint.id]);
  });

  it("fails a send to a kind without a sender as connection_error with a log line, never a crash, and retries", async () => {
    const lines: string[] = [];
    const t = await setup(undefined, lines);
    const { endpoint } = await t.endpoints.create(SCOPE, { events: ["message.sent"], destination: kafka() });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    const history = await t.history(endpoint.id);
    expect(history.map((d) => [d.status, d.error])).toEqual([
      ["failed", "connection_error"],
      ["pending", null],
    ]);
    const line = lines.map((l) => JSON.parse(l)).find((l) => l.msg?.includes("no sender"));
    expect(line).toMatchObject({ kind: "kafka", webhook_id: endpoint.id });
    expect(lines.join("\n")).not.toContain(KAFKA_PASSWORD);
  });

  it("logs a sender that throws without the credentials its message quotes", async () => {
    const lines: string[] = [];
    const sender: BrokerSender = {
      async send(r) {
        const d = r.destination;
        throw new Error(`SASL failed for ${d.kind === "kafka" ? d.sasl?.password : ""}`);
      },
      async release() {},
      async close() {},
    };
    const t = await setup(sender, lines);
    const { endpoint } = await t.endpoints.create(SCOPE, { events: ["message.sent"], destination: kafka() });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    expect((await t.history(endpoint.id))[0]).toMatchObject({ status: "failed", error: "connection_error" });
    expect(lines.join("\n")).toContain("SASL failed for ********");
    expect(lines.join("\n")).not.toContain(KAFKA_PASSWORD);
  });
});
