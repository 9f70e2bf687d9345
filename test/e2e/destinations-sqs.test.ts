import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unwrap, type WebhookWithSecret } from "../../clients/typescript/client.ts";
import { BROKERS_REQUIRED, type BrokerServer } from "../support/broker-server.ts";
import {
  collapsed,
  eventOf,
  everyAnswer,
  expectNoCredential,
  publishAbout,
  verifyConsumed,
} from "../support/destinations-e2e.ts";
import type { HeraldProcess } from "../support/herald-process.ts";
import { sqsUnavailable, startSqs } from "../support/sqs-server.ts";
import { type SqsTail, sqsAction, startSqsTail } from "../support/sqs-tail.ts";
import { allDeliveries, type DeliveryWorld, deliveryWorld, waitUntil } from "./delivery-support.ts";

// Issue 28 from outside, on SQS (ElasticMQ, scripts/sqs.sh): a Herald process (PostgreSQL store) with an
// SQS endpoint on a FIFO queue made through the HTTP API, events published through it, and the queue read
// by raw ReceiveMessage calls that share no code with Herald. Every message verifies (Standard Webhooks'
// library and Herald's clients/ verifier) and matches its recorded receipt; the server is killed mid-run
// and started again with nothing lost, each resource's events in order in their message group; the secret
// access key and session token appear in no answer about the endpoint and nowhere in Herald's debug log.
const missing = sqsUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs an SQS server: ${missing}`);

const SECRET_KEY = "sqs-SecretKey-e2e-7c0b/Q+";
const SESSION_TOKEN = "sqs-SessionToken-e2e-a61f";
const RESOURCES = [randomUUID(), randomUUID()];
const BEFORE = 6;
const DURING = 6;

describe.skipIf(missing)(`SQS destinations, whole system${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let sqs: BrokerServer;
  let world: DeliveryWorld;
  let herald: HeraldProcess;
  let tail: SqsTail;
  let endpoint: WebhookWithSecret;
  const published: { id: string; resource: string }[] = [];

  beforeAll(async () => {
    sqs = await startSqs(true);
    const server = sqs.env.SQS_ENDPOINT ?? "";
    const queueUrl = String(
      (
        await sqsAction(server, "CreateQueue", {
          QueueName: `e2e-${Date.now()}.fifo`,
          Attributes: { FifoQueue: "true" },
        })
      ).QueueUrl,
    );
    world = await deliveryWorld("e2e_dest_sqs", {
      HERALD_LOG_LEVEL: "debug",
      HERALD_DELIVERY_TIMEOUT: "3s",
      // The server is plain HTTP on loopback; retries last as long as its restart may take.
      HERALD_ALLOW_HTTP_URLS: "true",
      HERALD_RETRY_SCHEDULE: Array.from({ length: 60 }, (_, i) => (i < 3 ? "500ms" : "3s")).join(","),
    });
    herald = await world.start();
    tail = startSqsTail(server, queueUrl);
    endpoint = (await unwrap(
      world.client(herald.baseUrl).POST("/api/v1/webhooks", {
        body: {
          kind: "sqs",
          sqs: {
            queue_url: queueUrl,
            region: sqs.env.SQS_REGION ?? "us-east-1",
            access_key_id: "AKIAHERALDE2E",
            secret_access_key: SECRET_KEY,
            session_token: SESSION_TOKEN,
            endpoint_url: server,
          },
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
    await sqs?.close();
  });

  const publish = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const resource = RESOURCES[published.length % RESOURCES.length]!;
      published.push({ id: await publishAbout(herald.baseUrl, world.token, resource), resource });
    }
  };
  const consumed = () => new Set(tail.records.map(eventOf));
  const ids = () => published.map((p) => p.id).sort();

  it("delivers verifiable messages grouped by resource, each with its receipt recorded", async () => {
    await publish(BEFORE);
    await waitUntil(
      () => consumed().size === BEFORE,
      () => `${consumed().size} of ${BEFORE} consumed`,
    );
    const succeeded = await allDeliveries(world.client(herald.baseUrl), endpoint.id, "succeeded");
    expect(succeeded.map((d) => d.event_id).sort()).toEqual(ids());
    for (const r of tail.records) {
      await verifyConsumed(r, endpoint);
      // The group id is the event's resource_id (key: resource).
      expect(r.key).toBe((JSON.parse(r.body) as { resource_id: string }).resource_id);
      const d = succeeded.find((x) => x.event_id === eventOf(r))!;
      expect(d.response_status).toBeNull();
      expect(d.receipt).toEqual(r.place);
    }
  });

  it("loses nothing across a server killed and started again, and keeps each resource's order", async () => {
    const client = world.client(herald.baseUrl);
    await sqs.halt("kill");
    await publish(DURING);
    await waitUntil(
      async () => (await allDeliveries(client, endpoint.id, "failed")).length >= 2,
      () => "two failed attempts while the server is down",
    );
    await sqs.resume();
    const total = BEFORE + DURING;
    await waitUntil(
      () => consumed().size === total,
      () => `${consumed().size} of ${total} consumed`,
    );
    expect([...consumed()].sort()).toEqual(ids());
    for (const r of tail.records) await verifyConsumed(r, endpoint);
    for (const resource of RESOURCES) {
      const group = tail.records.filter((r) => r.key === resource).map(eventOf);
      expect(collapsed(group)).toEqual(published.filter((p) => p.resource === resource).map((p) => p.id));
    }
    const deliveries = await allDeliveries(client, endpoint.id);
    const failed = deliveries.filter((d) => d.status === "failed");
    for (const d of failed) expect(["connection_error", "timeout"]).toContain(d.error);
    for (const { id } of published) {
      const ofEvent = deliveries.filter((d) => d.event_id === id);
      const succeeded = ofEvent.filter((d) => d.status === "succeeded");
      expect(succeeded, `the succeeded attempt of ${id}`).toHaveLength(1);
      for (const f of ofEvent.filter((d) => d.status === "failed"))
        expect(f.attempt).toBeLessThan(succeeded[0]!.attempt);
      expect(tail.records.filter((r) => eventOf(r) === id).map((r) => r.place)).toContainEqual(
        succeeded[0]!.receipt,
      );
    }
    expect(failed.some((d) => d.event_id === published[BEFORE]!.id)).toBe(true);
  });

  it("never shows the secret access key or the session token", async () => {
    const client = world.client(herald.baseUrl);
    const got = await unwrap(client.GET("/api/v1/webhooks/{id}", { params: { path: { id: endpoint.id } } }));
    expect(got).toMatchObject({
      kind: "sqs",
      sqs: { access_key_id: "AKIAHERALDE2E", secret_access_key: "********", session_token: "********" },
    });
    const answers = await everyAnswer(herald.baseUrl, world.token, [endpoint.id]);
    expect(answers.join("\n")).toContain("AKIAHERALDE2E");
    expectNoCredential(
      { "the API's answers": [...answers, JSON.stringify(endpoint)], "Herald's log": [herald.output()] },
      [SECRET_KEY, SESSION_TOKEN],
    );
    // What was searched is Herald's whole output (at debug level), the requests about this endpoint in it.
    expect(herald.output()).toContain(`/api/v1/webhooks/${endpoint.id}/deliveries`);
  });
});
