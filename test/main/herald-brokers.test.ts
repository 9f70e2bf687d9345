import { afterEach, describe, expect, it } from "vitest";
import { createJsonLogger } from "../../src/adapters/json-logger.ts";
import { systemClock, systemIds } from "../../src/adapters/system.ts";
import { parseConfig } from "../../src/app/config.ts";
import type { BrokerDeliveryRequest, BrokerSender } from "../../src/app/ports/sending.ts";
import { tokenUseCases } from "../../src/app/tokens.ts";
import { createHerald, type Herald } from "../../src/main/herald.ts";
import { deliveredEvent, scriptedSender } from "../support/engine-harness.ts";
import { until } from "../support/until.ts";

// The process wiring of broker senders (ADR 27): createHerald hands the engine the registry made by
// makeBrokerSenders, the endpoint use cases release on change and delete, and the stop closes every
// sender after the engine drained.
let herald: Herald | null = null;
afterEach(async () => {
  await herald?.stop(1_000);
  herald = null;
});

const PASSWORD = "wired-sasl-password-61d0";

describe("createHerald with broker senders", () => {
  it("delivers a Kafka endpoint's events through the registered sender, records the receipt, releases and closes", async () => {
    const requests: BrokerDeliveryRequest[] = [];
    const log: string[] = [];
    const lines: string[] = [];
    const kafka: BrokerSender = {
      async send(r) {
        requests.push(r);
        return {
          ok: true,
          responseStatus: null,
          responseBody: null,
          error: null,
          durationMs: 1,
          retryAfterMs: null,
          receipt: { partition: 0, offset: String(requests.length) },
        };
      },
      async release(id) {
        log.push(`release ${id}`);
      },
      async close() {
        log.push("close");
      },
    };
    herald = await createHerald({
      config: parseConfig({ HERALD_STORE: "memory" }),
      logger: createJsonLogger("debug", (l) => lines.push(l)),
      store: "memory",
      printFirstToken: false,
      makeSender: () => scriptedSender(),
      makeBrokerSenders: () => ({ kafka }),
    });
    const { token } = await tokenUseCases({
      tokens: herald.repos.tokens,
      clock: systemClock,
      ids: systemIds,
    }).create({ name: "t" });
    const h = herald;
    const call = async (method: string, path: string, json?: unknown) => {
      const res = await h.fetch(
        new Request(`http://herald.test/api/v1${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: json === undefined ? undefined : JSON.stringify(json),
        }),
      );
      return { status: res.status, body: (await res.json()) as Record<string, unknown> & { id: string } };
    };
    const created = await call("POST", "/webhooks", {
      kind: "kafka",
      events: ["message.delivered"],
      kafka: {
        brokers: ["b1.example.com:9092"],
        topic: "orders",
        sasl: { mechanism: "plain", username: "herald", password: PASSWORD },
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const published = await call("POST", "/events", deliveredEvent());
    expect(published.status).toBe(202);
    let deliveries: { status: string; receipt: unknown }[] = [];
    await until(async () => {
      deliveries = (await call("GET", `/webhooks/${id}/deliveries`)).body.data as typeof deliveries;
      return deliveries[0]?.status === "succeeded";
    }, "the delivery recorded");
    expect(deliveries[0]!.receipt).toEqual({ partition: 0, offset: "1" });
    expect(requests[0]!.destination).toMatchObject({ kind: "kafka", sasl: { password: PASSWORD } });
    expect((await call("PATCH", `/webhooks/${id}`, { kafka: { topic: "orders2" } })).status).toBe(200);
    expect(await fetchStatus(h, token, "DELETE", `/webhooks/${id}`)).toBe(204);
    await until(() => log.length >= 2, "two releases");
    expect(log).toEqual([`release ${id}`, `release ${id}`]);
    await h.stop(1_000);
    herald = null;
    expect(log.at(-1)).toBe("close");
    expect(lines.join("\n")).not.toContain(PASSWORD);
  });
});

async function fetchStatus(h: Herald, token: string, method: string, path: string): Promise<number> {
  const res = await h.fetch(
    new Request(`http://herald.test/api/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}` },
    }),
  );
  return res.status;
}
