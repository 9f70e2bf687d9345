import { describe, expect, it } from "vitest";
import { createJsonLogger } from "../../src/adapters/json-logger.ts";
import { brokerSenders, CLOSE_WITHIN_MS } from "../../src/app/destinations.ts";
import type { BrokerDeliveryRequest, BrokerSender } from "../../src/app/ports/sending.ts";

const clock = { now: () => new Date() };

function sender(name: string, calls: string[], fail = false): BrokerSender {
  return {
    async send() {
      calls.push(`${name} send`);
      return {
        ok: true,
        responseStatus: null,
        responseBody: null,
        error: null,
        durationMs: 1,
        retryAfterMs: null,
      };
    },
    async release(id) {
      calls.push(`${name} release ${id}`);
      if (fail) throw new Error(`${name} release broke`);
    },
    async close() {
      calls.push(`${name} close`);
      if (fail) throw new Error(`${name} close broke`);
    },
  };
}

const request = (kind: "kafka" | "rabbitmq"): BrokerDeliveryRequest =>
  ({
    endpointId: "e1",
    destination:
      kind === "kafka"
        ? { kind, brokers: ["b:1"], topic: "t", key: "resource", tls: true, sasl: null }
        : { kind, url: "amqp://h", password: "p", exchange: "", routingKey: "" },
  }) as BrokerDeliveryRequest;

describe("the broker sender registry", () => {
  it("routes by kind, releases and closes every sender, each failure logged and swallowed", async () => {
    const calls: string[] = [];
    const lines: string[] = [];
    const reg = brokerSenders(
      { kafka: sender("kafka", calls, true), sqs: sender("sqs", calls) },
      { logger: createJsonLogger("debug", (l) => lines.push(l)), clock },
    );
    expect((await reg.send(request("kafka"))).ok).toBe(true);
    const missing = await reg.send(request("rabbitmq"));
    expect([missing.ok, missing.error]).toEqual([false, "connection_error"]);
    await expect(reg.release("e1")).resolves.toBeUndefined();
    await expect(reg.close()).resolves.toBeUndefined();
    expect(calls).toEqual(["kafka send", "kafka release e1", "sqs release e1", "kafka close", "sqs close"]);
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; kind?: string });
    expect(logged.map((l) => [l.msg, l.kind])).toEqual([
      ["no sender for this destination kind in this process", "rabbitmq"],
      ["releasing a broker producer failed", "kafka"],
      ["closing a broker sender failed", "kafka"],
    ]);
  });

  it("logs each failed attempt with its kind, endpoint, event and error code, never a credential", async () => {
    const lines: string[] = [];
    const refusing: BrokerSender = {
      ...sender("rabbitmq", []),
      // A broker's refusal text may quote what it was given; the registry must not pass it on.
      send: async () => ({
        ok: false,
        responseStatus: null,
        responseBody: "ACCESS_REFUSED - login with password amqp-S3cret-unit refused",
        error: "auth_error",
        durationMs: 7,
        retryAfterMs: null,
      }),
    };
    const reg = brokerSenders(
      { rabbitmq: refusing, kafka: sender("kafka", []) },
      { logger: createJsonLogger("info", (l) => lines.push(l)), clock },
    );
    const failed = { ...request("rabbitmq"), eventId: "ev1" } as BrokerDeliveryRequest;
    (failed.destination as { password: string }).password = "amqp-S3cret-unit";
    const outcome = await reg.send(failed);
    expect([outcome.ok, outcome.error]).toEqual([false, "auth_error"]);
    expect((await reg.send(request("kafka"))).ok).toBe(true);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: "warn",
      msg: "broker delivery attempt failed",
      kind: "rabbitmq",
      webhook_id: "e1",
      event_id: "ev1",
      error: "auth_error",
      duration_ms: 7,
    });
    expect(lines[0]).not.toContain("S3cret");
  });

  it("gives a sender that never finishes closing CLOSE_WITHIN_MS, then goes on, saying so", async () => {
    const calls: string[] = [];
    const lines: string[] = [];
    const hung: BrokerSender = { ...sender("kafka", calls), close: () => new Promise<void>(() => {}) };
    const reg = brokerSenders(
      { kafka: hung, sqs: sender("sqs", calls) },
      { logger: createJsonLogger("debug", (l) => lines.push(l)), clock },
    );
    const started = performance.now();
    await reg.close();
    expect(performance.now() - started).toBeGreaterThanOrEqual(CLOSE_WITHIN_MS - 50);
    expect(calls).toEqual(["sqs close"]);
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; kind?: string });
    expect(logged.map((l) => [l.msg, l.kind])).toEqual([
      ["a broker sender did not close in time; leaving it to the process's end", "kafka"],
    ]);
  });
});
