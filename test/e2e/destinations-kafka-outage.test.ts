import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unwrap, type WebhookWithSecret } from "../../clients/typescript/client.ts";
import { BROKERS_REQUIRED, type BrokerServer } from "../support/broker-server.ts";
import { collapsed, eventOf, publishAbout, verifyConsumed } from "../support/destinations-e2e.ts";
import type { HeraldProcess } from "../support/herald-process.ts";
import { kafkaJars, kafkaUnavailable, startKafka } from "../support/kafka-server.ts";
import { type KafkaTail, startKafkaTail } from "../support/kafka-tail.ts";
import { allDeliveries, type DeliveryWorld, deliveryWorld, waitUntil } from "./delivery-support.ts";

// Issue 28 from outside: a Kafka broker killed mid-run and started again with nothing lost. A Herald
// process (PostgreSQL store) delivers to a FIFO endpoint keyed by resource; Kafka's own Java consumer
// reads the topic throughout. Events published while the broker is down are accepted (202), their
// attempts fail as connection_error or timeout and are retried, and once the broker is back every
// accepted event is consumed at least once, verified, in each resource's order, with one succeeded
// attempt per event recorded after the failed ones.
const missing = kafkaUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs Kafka: ${missing}`);

const RESOURCES = [randomUUID(), randomUUID()];
const BEFORE = 4;
const DURING = 8;

describe.skipIf(missing)(`a Kafka outage, whole system${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let kafka: BrokerServer;
  let world: DeliveryWorld;
  let herald: HeraldProcess;
  let tail: KafkaTail;
  let endpoint: WebhookWithSecret;
  const topic = `e2e-outage-${Date.now()}`;
  const published: { id: string; resource: string }[] = [];

  beforeAll(async () => {
    kafka = await startKafka(true);
    world = await deliveryWorld("e2e_dest_kafka_outage", {
      HERALD_DELIVERY_TIMEOUT: "3s",
      // Retries for as long as a broker restart may take on a loaded machine (minutes, not seconds).
      HERALD_RETRY_SCHEDULE: Array.from({ length: 60 }, (_, i) => (i < 3 ? "500ms" : "3s")).join(","),
    });
    herald = await world.start();
    const brokers = kafka.env.KAFKA_BROKERS ?? "";
    tail = await startKafkaTail(await kafkaJars(), brokers, [topic]);
    endpoint = (await unwrap(
      world.client(herald.baseUrl).POST("/api/v1/webhooks", {
        body: {
          kind: "kafka",
          kafka: { brokers: [brokers], topic, tls: false },
          events: ["message.delivered"],
          signature_scheme: "standard-webhooks",
          ordering: "fifo",
        } as never,
      }),
    )) as WebhookWithSecret;
  });

  afterAll(async () => {
    await tail?.close();
    await world?.close();
    await kafka?.close();
  });

  const publish = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const resource = RESOURCES[published.length % RESOURCES.length]!;
      published.push({ id: await publishAbout(herald.baseUrl, world.token, resource), resource });
    }
  };
  const consumed = () => new Set(tail.records.map(eventOf));

  it("loses nothing across a broker killed and started again, and keeps each resource's order", async () => {
    const client = world.client(herald.baseUrl);
    await publish(BEFORE);
    await waitUntil(
      () => consumed().size === BEFORE,
      () => `${consumed().size} of ${BEFORE} consumed`,
    );

    await kafka.halt("kill");
    await publish(DURING);
    // The broker is down: attempts fail and are retried (the FIFO endpoint holds the later events back).
    await waitUntil(
      async () => (await allDeliveries(client, endpoint.id, "failed")).length >= 2,
      () => "two failed attempts while the broker is down",
    );
    await kafka.resume();

    const total = BEFORE + DURING;
    await waitUntil(
      () => consumed().size === total,
      () => `${consumed().size} of ${total} consumed`,
    );
    // Every accepted event, and nothing else, was consumed and verifies.
    expect([...consumed()].sort()).toEqual(published.map((p) => p.id).sort());
    for (const r of tail.records) await verifyConsumed(r, endpoint);
    for (const resource of RESOURCES) {
      const records = tail.records.filter((r) => r.key === resource);
      expect(collapsed(records.map(eventOf))).toEqual(
        published.filter((p) => p.resource === resource).map((p) => p.id),
      );
    }

    const deliveries = await allDeliveries(client, endpoint.id);
    const failed = deliveries.filter((d) => d.status === "failed");
    expect(failed.length).toBeGreaterThanOrEqual(2);
    for (const d of failed) expect(["connection_error", "timeout"]).toContain(d.error);
    for (const { id } of published) {
      const ofEvent = deliveries.filter((d) => d.event_id === id);
      const succeeded = ofEvent.filter((d) => d.status === "succeeded");
      expect(succeeded, `the succeeded attempt of ${id}`).toHaveLength(1);
      const s = succeeded[0]!;
      // Failed attempts of the event came before its success, which names where the consumer read it.
      for (const f of ofEvent.filter((d) => d.status === "failed")) expect(f.attempt).toBeLessThan(s.attempt);
      expect(tail.records.filter((r) => eventOf(r) === id).map((r) => r.place)).toContainEqual(s.receipt);
    }
    // At least the first event published during the outage failed before it succeeded.
    const firstDuring = published[BEFORE]!.id;
    expect(failed.some((d) => d.event_id === firstDuring)).toBe(true);
  });
});
