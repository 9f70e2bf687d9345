import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookWithSecret } from "../../clients/typescript/client.ts";
import type { BrokerServer } from "../support/broker-server.ts";
import {
  brokerTitle,
  type DestinationSystem,
  destinationSystem,
  expectNothingLost,
  expectOutageSurvived,
  OUTAGE_ENV,
} from "../support/destination-system.ts";
import { collapsed, eventOf } from "../support/destinations-e2e.ts";
import { kafkaJars, kafkaUnavailable, startKafka } from "../support/kafka-server.ts";
import { type KafkaTail, startKafkaTail } from "../support/kafka-tail.ts";
import { allDeliveries, waitUntil } from "./delivery-support.ts";

// Issue 28 from outside: a Kafka broker killed mid-run and started again with nothing lost. A Herald
// process (PostgreSQL store) delivers to a FIFO endpoint keyed by resource; Kafka's own Java consumer
// reads the topic throughout. Events published while the broker is down are accepted (202), their
// attempts fail as connection_error or timeout and are retried, and once the broker is back every
// accepted event is consumed at least once, verified, in each resource's order, with one succeeded
// attempt per event recorded after the failed ones.
const missing = kafkaUnavailable();
const title = brokerTitle("Kafka", missing);

const RESOURCES = [randomUUID(), randomUUID()];
const BEFORE = 4;
const DURING = 8;

describe.skipIf(missing)(`a Kafka outage, whole system${title}`, () => {
  let kafka: BrokerServer;
  let system: DestinationSystem;
  let tail: KafkaTail;
  let endpoint: WebhookWithSecret;
  const topic = `e2e-outage-${Date.now()}`;

  beforeAll(async () => {
    kafka = await startKafka(true);
    // Retries for as long as a broker restart may take on a loaded machine (minutes, not seconds).
    system = await destinationSystem("e2e_dest_kafka_outage", RESOURCES, OUTAGE_ENV);
    const brokers = kafka.env.KAFKA_BROKERS ?? "";
    tail = await startKafkaTail(await kafkaJars(), brokers, [topic]);
    endpoint = await system.create({
      kind: "kafka",
      kafka: { brokers: [brokers], topic, tls: false },
      signature_scheme: "standard-webhooks",
      ordering: "fifo",
    });
  });

  afterAll(async () => {
    await tail?.close();
    await system?.close();
    await kafka?.close();
  });

  const consumed = () => new Set(tail.records.map(eventOf));

  it("loses nothing across a broker killed and started again, and keeps each resource's order", async () => {
    const { client, published } = system;
    await system.publish(BEFORE);
    await waitUntil(
      () => consumed().size === BEFORE,
      () => `${consumed().size} of ${BEFORE} consumed`,
    );

    // Every accepted event, and nothing else, is consumed once the broker is back, and verifies.
    await expectOutageSurvived(system, kafka, endpoint, tail, DURING, "broker");
    for (const resource of RESOURCES) {
      const records = tail.records.filter((r) => r.key === resource);
      expect(collapsed(records.map(eventOf))).toEqual(
        published.filter((p) => p.resource === resource).map((p) => p.id),
      );
    }

    const deliveries = await allDeliveries(client, endpoint.id);
    expect(deliveries.filter((d) => d.status === "failed").length).toBeGreaterThanOrEqual(2);
    // Failed attempts of each event came before its success, which names where the consumer read it.
    expectNothingLost(deliveries, system.ids(), ["connection_error", "timeout"], (id) =>
      tail.records.filter((r) => eventOf(r) === id).map((r) => r.place),
    );
    // At least the first event published during the outage failed before it succeeded.
    const firstDuring = published[BEFORE]!.id;
    expect(deliveries.some((d) => d.status === "failed" && d.event_id === firstDuring)).toBe(true);
  });
});
