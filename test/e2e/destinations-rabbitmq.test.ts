import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unwrap, type WebhookWithSecret } from "../../clients/typescript/client.ts";
import { type AmqpTail, startAmqpTail } from "../support/amqp-tail.ts";
import { type BrokerServer, run } from "../support/broker-server.ts";
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
import { rabbitmqUnavailable, startRabbitmq } from "../support/rabbitmq-server.ts";
import { allDeliveries, waitUntil } from "./delivery-support.ts";

// Issue 28 from outside, on RabbitMQ: a Herald process (PostgreSQL store) with RabbitMQ endpoints made
// through the HTTP API (a user of their own, with a password), events published through it, and the
// queue read by an amqplib consumer that shares no code with Herald. Every message verifies (Standard
// Webhooks' library and Herald's clients/ verifier); the node is killed mid-run and started again with
// nothing lost, each resource's events still in order on the FIFO endpoint; a refused password is an
// auth_error; neither password appears in any answer about the endpoints or in Herald's debug log.
const missing = rabbitmqUnavailable();
const title = brokerTitle("RabbitMQ", missing);

const PASSWORD = "amqp-Pa55word-e2e-9d3e";
const WRONG = "amqp-Wr0ng-e2e-51a7";
const RESOURCES = [randomUUID(), randomUUID()];
const BEFORE = 6;
const DURING = 6;

describe.skipIf(missing)(`RabbitMQ destinations, whole system${title}`, () => {
  let rabbit: BrokerServer;
  let system: DestinationSystem;
  let tail: AmqpTail;
  let endpoint: WebhookWithSecret;
  let refused: WebhookWithSecret;
  const names = { exchange: `e2e-x-${Date.now()}`, queue: `e2e-q-${Date.now()}` };

  beforeAll(async () => {
    rabbit = await startRabbitmq(true);
    const ctl = (...args: string[]) =>
      run("scripts/rabbitmq.sh", ["ctl", ...args], { RABBITMQ_STATE: rabbit.state ?? "" });
    await ctl("add_user", "herald", PASSWORD);
    await ctl("set_permissions", "-p", "/", "herald", ".*", ".*", ".*");
    system = await destinationSystem("e2e_dest_rabbitmq", RESOURCES, {
      HERALD_LOG_LEVEL: "debug",
      ...OUTAGE_ENV,
    });
    const guest = rabbit.env.RABBITMQ_URL ?? "";
    tail = await startAmqpTail(guest, names.exchange, names.queue, "orders");
    const url = guest.replace("guest:guest@", "herald@");
    const create = (password: string, extra: Record<string, unknown>) =>
      system.create({
        kind: "rabbitmq",
        rabbitmq: { url, password, exchange: names.exchange, routing_key: "orders" },
        ...extra,
      });
    endpoint = await create(PASSWORD, { signature_scheme: "standard-webhooks", ordering: "fifo" });
    refused = await create(WRONG, {});
  });

  afterAll(async () => {
    await tail?.close();
    await system?.close();
    await rabbit?.close();
  });

  const consumed = () => new Set(tail.records.map(eventOf));

  it("delivers verifiable messages, each with its confirm's receipt recorded", async () => {
    await system.publish(BEFORE);
    await waitUntil(
      () => consumed().size === BEFORE,
      () => `${consumed().size} of ${BEFORE} consumed`,
    );
    for (const r of tail.records) {
      await verifyConsumed(r, endpoint);
      expect(r.place.message_id).toBe(eventOf(r));
    }
    const succeeded = await allDeliveries(system.client, endpoint.id, "succeeded");
    expect(succeeded.map((d) => d.event_id).sort()).toEqual(system.ids());
    for (const d of succeeded) {
      expect(d.response_status).toBeNull();
      expect(d.url).toMatch(/^amqp:\/\/herald@127\.0\.0\.1:\d+/);
      expect(Object.keys(d.receipt ?? {})).toEqual(["delivery_tag"]);
      expect(d.receipt?.delivery_tag).toBeGreaterThanOrEqual(1);
    }
  });

  it("loses nothing across a node killed and started again, and keeps each resource's order", async () => {
    const { client, published } = system;
    await expectOutageSurvived(system, rabbit, endpoint, tail, DURING, "node");
    // One queue: the consumed order is the order the node stored them in.
    for (const resource of RESOURCES) {
      const mine = published.filter((p) => p.resource === resource).map((p) => p.id);
      expect(collapsed(tail.records.map(eventOf).filter((id) => mine.includes(id)))).toEqual(mine);
    }
    const deliveries = await allDeliveries(client, endpoint.id);
    expectNothingLost(deliveries, system.ids(), ["connection_error", "timeout"]);
    const firstDuring = published[BEFORE]!.id;
    expect(deliveries.some((d) => d.status === "failed" && d.event_id === firstDuring)).toBe(true);
  });

  it("records a refused password as auth_error, and never shows either password", async () => {
    const { client } = system;
    await waitUntil(
      async () => (await allDeliveries(client, refused.id, "failed")).some((d) => d.error === "auth_error"),
      () => "an auth_error attempt of the endpoint with the wrong password",
    );
    const got = await unwrap(client.GET("/api/v1/webhooks/{id}", { params: { path: { id: endpoint.id } } }));
    expect(got).toMatchObject({ kind: "rabbitmq", rabbitmq: { password: "********" } });
    await expectCredentialsHidden(system, [endpoint.id, refused.id], [PASSWORD, WRONG], names.exchange, [
      JSON.stringify(endpoint),
      JSON.stringify(refused),
    ]);
  });
});
