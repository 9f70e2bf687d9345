import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unwrap, type WebhookWithSecret } from "../../clients/typescript/client.ts";
import type { BrokerServer } from "../support/broker-server.ts";
import type { Consumed } from "../support/consumed.ts";
import {
  brokerTitle,
  type DestinationSystem,
  destinationSystem,
  expectCredentialsHidden,
} from "../support/destination-system.ts";
import { collapsed, eventOf, expectNoCredential, verifyConsumed } from "../support/destinations-e2e.ts";
import { addAdvertisedSaslListener } from "../support/kafka-sasl.ts";
import { kafkaJars, kafkaUnavailable, startKafka } from "../support/kafka-server.ts";
import { type KafkaTail, startKafkaTail } from "../support/kafka-tail.ts";
import { allDeliveries, waitUntil } from "./delivery-support.ts";

// Issue 28 from outside, on Kafka: a Herald process (PostgreSQL store) with Kafka endpoints made through
// the HTTP API, events published through it, and the topics read by Kafka's own Java consumer
// (test/support/fixtures/KafkaTail.java), which shares no code with Herald. Every record is verified as a
// consumer would (Standard Webhooks' library, Herald's clients/ verifier; Ed25519 too), matches the
// receipt Herald recorded, and a FIFO endpoint keyed by resource keeps each resource's events in order.
// Credentials (a SASL password that works, one that does not) are looked for in every answer about the
// endpoints and in Herald's whole log at debug level, and must be nowhere.
const missing = kafkaUnavailable();
const title = brokerTitle("Kafka", missing);

const PASSWORD = "kafka-Pa55word-e2e-4f1c";
const WRONG = "kafka-Wr0ng-e2e-88b2";
/** Three resources (message ids, so UUIDs), each with several events. */
const RESOURCES = [randomUUID(), randomUUID(), randomUUID()];
const EVENTS = 12;

describe.skipIf(missing)(`Kafka destinations, whole system${title}`, () => {
  let kafka: BrokerServer;
  let system: DestinationSystem;
  let tail: KafkaTail;
  let fifo: WebhookWithSecret;
  let ed: WebhookWithSecret;
  let refused: WebhookWithSecret;
  let saslBrokers = "";
  const topics = { fifo: `e2e-fifo-${Date.now()}`, ed: `e2e-ed-${Date.now()}` };

  beforeAll(async () => {
    kafka = await startKafka(true);
    saslBrokers = await addAdvertisedSaslListener(kafka, "herald", PASSWORD);
    const sasl = saslBrokers;
    const plain = kafka.env.KAFKA_BROKERS ?? "";
    system = await destinationSystem("e2e_dest_kafka", RESOURCES, { HERALD_LOG_LEVEL: "debug" });
    tail = await startKafkaTail(await kafkaJars(), plain, [topics.fifo, topics.ed]);
    const create = (body: Record<string, unknown>) => system.create({ kind: "kafka", ...body });
    fifo = await create({
      kafka: {
        brokers: [sasl],
        topic: topics.fifo,
        tls: false,
        sasl: { mechanism: "plain", username: "herald", password: PASSWORD },
      },
      signature_scheme: "standard-webhooks",
      ordering: "fifo",
    });
    ed = await create({
      kafka: { brokers: [plain], topic: topics.ed, tls: false, key: "endpoint" },
      signature_scheme: "standard-webhooks-ed25519",
    });
    refused = await create({
      kafka: {
        brokers: [sasl],
        topic: topics.fifo,
        tls: false,
        sasl: { mechanism: "plain", username: "herald", password: WRONG },
      },
    });
  });

  afterAll(async () => {
    await tail?.close();
    await system?.close();
    await kafka?.close();
  });

  const ofTopic = (topic: string): Consumed[] => tail.records.filter((r) => r.destination === topic);
  const distinct = (topic: string) => new Set(ofTopic(topic).map(eventOf)).size;

  it("delivers every event to each topic, verifiable by an independent consumer, with its receipt recorded", async () => {
    const { published } = system;
    await system.publish(EVENTS);
    await waitUntil(
      () => distinct(topics.fifo) === EVENTS && distinct(topics.ed) === EVENTS,
      () => `${distinct(topics.fifo)} and ${distinct(topics.ed)} of ${EVENTS} events consumed`,
    );
    const ids = system.ids();
    for (const [endpoint, topic, brokers] of [
      [fifo, topics.fifo, saslBrokers],
      [ed, topics.ed, kafka.env.KAFKA_BROKERS],
    ] as const) {
      const records = ofTopic(topic);
      const verified = await Promise.all(records.map((r) => verifyConsumed(r, endpoint)));
      expect([...new Set(verified.map((e) => e.id))].sort()).toEqual(ids);
      // The record key: the event's resource_id (key: resource), or the endpoint id (key: endpoint).
      for (const r of records) {
        const resource = published.find((p) => p.id === eventOf(r))!.resource;
        expect(r.key).toBe(endpoint === fifo ? resource : endpoint.id);
        expect((JSON.parse(r.body) as { resource_id: string }).resource_id).toBe(resource);
      }
      // Each event's successful attempt names the place Kafka's consumer read it from.
      const succeeded = await allDeliveries(system.client, endpoint.id, "succeeded");
      expect(succeeded.map((d) => d.event_id).sort()).toEqual(ids);
      for (const d of succeeded) {
        expect(d.response_status).toBeNull();
        expect(d.url).toBe(`kafka://${brokers}/${topic}`);
        const read = records.filter((r) => eventOf(r) === d.event_id).map((r) => r.place);
        expect(read).toContainEqual(d.receipt);
      }
    }
  });

  it("keeps each resource's events in acceptance order on the FIFO endpoint keyed by resource", async () => {
    for (const resource of RESOURCES) {
      const records = ofTopic(topics.fifo).filter((r) => r.key === resource);
      // One key, one partition: the partition's order is the consumed order.
      expect(new Set(records.map((r) => r.place.partition)).size).toBe(1);
      expect(collapsed(records.map(eventOf))).toEqual(
        system.published.filter((p) => p.resource === resource).map((p) => p.id),
      );
    }
  });

  it("records the refused SASL password's attempts as auth_error", async () => {
    const { client } = system;
    await waitUntil(
      async () => (await allDeliveries(client, refused.id, "failed")).length >= 2,
      () => "two failed attempts of the endpoint with the wrong password",
    );
    const failed = await allDeliveries(client, refused.id, "failed");
    for (const d of failed) expect([d.error, d.receipt]).toEqual(["auth_error", null]);
  });

  it("never shows a credential in any answer about the endpoints or in Herald's log", async () => {
    const { client, herald, world } = system;
    const got = await unwrap(client.GET("/api/v1/webhooks/{id}", { params: { path: { id: fifo.id } } }));
    expect(got).toMatchObject({
      kind: "kafka",
      kafka: { sasl: { username: "herald", password: "********" } },
    });
    const changed = await fetch(`${herald.baseUrl}/api/v1/webhooks/${refused.id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${world.token}`, "content-type": "application/json" },
      body: JSON.stringify({ description: "still refused" }),
    });
    expect(changed.status).toBe(200);
    // The answers name the user and the topics; the search finds what it looks for.
    await expectCredentialsHidden(system, [fifo.id, ed.id, refused.id], [PASSWORD, WRONG], topics.fifo, [
      await changed.text(),
      JSON.stringify(fifo),
      JSON.stringify(refused),
    ]);
    // The search finds a credential where there is one.
    expect(() => expectNoCredential({ "a probe": [`{"password":"${PASSWORD}"}`] }, [PASSWORD])).toThrow(
      /a credential appears in a probe/,
    );
  });
});
