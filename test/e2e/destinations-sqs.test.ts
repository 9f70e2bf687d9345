import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unwrap, type WebhookWithSecret } from "../../clients/typescript/client.ts";
import type { BrokerServer } from "../support/broker-server.ts";
import {
  brokerTitle,
  type DestinationSystem,
  destinationSystem,
  expectCredentialsHidden,
  expectNothingLost,
  expectOutageSurvived,
  OUTAGE_ENV,
} from "../support/destination-system.ts";
import { collapsed, eventOf, verifyConsumed } from "../support/destinations-e2e.ts";
import { sqsUnavailable, startSqs } from "../support/sqs-server.ts";
import { type SqsTail, sqsAction, startSqsTail } from "../support/sqs-tail.ts";
import { allDeliveries, waitUntil } from "./delivery-support.ts";

// Issue 28 from outside, on SQS (ElasticMQ, scripts/sqs.sh): a Herald process (PostgreSQL store) with an
// SQS endpoint on a FIFO queue made through the HTTP API, events published through it, and the queue read
// by raw ReceiveMessage calls that share no code with Herald. Every message verifies (Standard Webhooks'
// library and Herald's clients/ verifier) and matches its recorded receipt; the server is killed mid-run
// and started again with nothing lost, each resource's events in order in their message group; the secret
// access key and session token appear in no answer about the endpoint and nowhere in Herald's debug log.
const missing = sqsUnavailable();
const title = brokerTitle("an SQS server", missing);

const SECRET_KEY = "sqs-SecretKey-e2e-7c0b/Q+";
const SESSION_TOKEN = "sqs-SessionToken-e2e-a61f";
const RESOURCES = [randomUUID(), randomUUID()];
const BEFORE = 6;
const DURING = 6;

describe.skipIf(missing)(`SQS destinations, whole system${title}`, () => {
  let sqs: BrokerServer;
  let system: DestinationSystem;
  let tail: SqsTail;
  let endpoint: WebhookWithSecret;

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
    // The server is plain HTTP on loopback.
    system = await destinationSystem("e2e_dest_sqs", RESOURCES, {
      HERALD_LOG_LEVEL: "debug",
      HERALD_ALLOW_HTTP_URLS: "true",
      ...OUTAGE_ENV,
    });
    tail = startSqsTail(server, queueUrl);
    endpoint = await system.create({
      kind: "sqs",
      sqs: {
        queue_url: queueUrl,
        region: sqs.env.SQS_REGION ?? "us-east-1",
        access_key_id: "AKIAHERALDE2E",
        secret_access_key: SECRET_KEY,
        session_token: SESSION_TOKEN,
        endpoint_url: server,
      },
      signature_scheme: "standard-webhooks",
      ordering: "fifo",
    });
  });

  afterAll(async () => {
    await tail?.close();
    await system?.close();
    await sqs?.close();
  });

  const consumed = () => new Set(tail.records.map(eventOf));

  it("delivers verifiable messages grouped by resource, each with its receipt recorded", async () => {
    await system.publish(BEFORE);
    await waitUntil(
      () => consumed().size === BEFORE,
      () => `${consumed().size} of ${BEFORE} consumed`,
    );
    const succeeded = await allDeliveries(system.client, endpoint.id, "succeeded");
    expect(succeeded.map((d) => d.event_id).sort()).toEqual(system.ids());
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
    const { client, published } = system;
    await expectOutageSurvived(system, sqs, endpoint, tail, DURING, "server");
    for (const resource of RESOURCES) {
      const group = tail.records.filter((r) => r.key === resource).map(eventOf);
      expect(collapsed(group)).toEqual(published.filter((p) => p.resource === resource).map((p) => p.id));
    }
    const deliveries = await allDeliveries(client, endpoint.id);
    expectNothingLost(deliveries, system.ids(), ["connection_error", "timeout"], (id) =>
      tail.records.filter((r) => eventOf(r) === id).map((r) => r.place),
    );
    const firstDuring = published[BEFORE]!.id;
    expect(deliveries.some((d) => d.status === "failed" && d.event_id === firstDuring)).toBe(true);
  });

  it("never shows the secret access key or the session token", async () => {
    const got = await unwrap(
      system.client.GET("/api/v1/webhooks/{id}", { params: { path: { id: endpoint.id } } }),
    );
    expect(got).toMatchObject({
      kind: "sqs",
      sqs: { access_key_id: "AKIAHERALDE2E", secret_access_key: "********", session_token: "********" },
    });
    await expectCredentialsHidden(system, [endpoint.id], [SECRET_KEY, SESSION_TOKEN], "AKIAHERALDE2E", [
      JSON.stringify(endpoint),
    ]);
  });
});
