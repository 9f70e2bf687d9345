import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unwrap, type WebhookWithSecret } from "../../clients/typescript/client.ts";
import { type AmqpTail, startAmqpTail } from "../support/amqp-tail.ts";
import { BROKERS_REQUIRED, type BrokerServer, run } from "../support/broker-server.ts";
import {
  collapsed,
  eventOf,
  everyAnswer,
  expectNoCredential,
  publishAbout,
  verifyConsumed,
} from "../support/destinations-e2e.ts";
import type { HeraldProcess } from "../support/herald-process.ts";
import { rabbitmqUnavailable, startRabbitmq } from "../support/rabbitmq-server.ts";
import { allDeliveries, type DeliveryWorld, deliveryWorld, waitUntil } from "./delivery-support.ts";

// Issue 28 from outside, on RabbitMQ: a Herald process (PostgreSQL store) with RabbitMQ endpoints made
// through the HTTP API (a user of their own, with a password), events published through it, and the
// queue read by an amqplib consumer that shares no code with Herald. Every message verifies (Standard
// Webhooks' library and Herald's clients/ verifier); the node is killed mid-run and started again with
// nothing lost, each resource's events still in order on the FIFO endpoint; a refused password is an
// auth_error; neither password appears in any answer about the endpoints or in Herald's debug log.
const missing = rabbitmqUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs RabbitMQ: ${missing}`);

const PASSWORD = "amqp-Pa55word-e2e-9d3e";
const WRONG = "amqp-Wr0ng-e2e-51a7";
const RESOURCES = [randomUUID(), randomUUID()];
const BEFORE = 6;
const DURING = 6;

describe.skipIf(missing)(
  `RabbitMQ destinations, whole system${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    let rabbit: BrokerServer;
    let world: DeliveryWorld;
    let herald: HeraldProcess;
    let tail: AmqpTail;
    let endpoint: WebhookWithSecret;
    let refused: WebhookWithSecret;
    const names = { exchange: `e2e-x-${Date.now()}`, queue: `e2e-q-${Date.now()}` };
    const published: { id: string; resource: string }[] = [];

    beforeAll(async () => {
      rabbit = await startRabbitmq(true);
      const ctl = (...args: string[]) =>
        run("scripts/rabbitmq.sh", ["ctl", ...args], { RABBITMQ_STATE: rabbit.state ?? "" });
      await ctl("add_user", "herald", PASSWORD);
      await ctl("set_permissions", "-p", "/", "herald", ".*", ".*", ".*");
      world = await deliveryWorld("e2e_dest_rabbitmq", {
        HERALD_LOG_LEVEL: "debug",
        HERALD_DELIVERY_TIMEOUT: "3s",
        // Retries for as long as a node restart may take on a loaded machine.
        HERALD_RETRY_SCHEDULE: Array.from({ length: 60 }, (_, i) => (i < 3 ? "500ms" : "3s")).join(","),
      });
      herald = await world.start();
      const guest = rabbit.env.RABBITMQ_URL ?? "";
      tail = await startAmqpTail(guest, names.exchange, names.queue, "orders");
      const url = guest.replace("guest:guest@", "herald@");
      const create = (password: string, extra: Record<string, unknown>) =>
        unwrap(
          world.client(herald.baseUrl).POST("/api/v1/webhooks", {
            body: {
              kind: "rabbitmq",
              rabbitmq: { url, password, exchange: names.exchange, routing_key: "orders" },
              events: ["message.delivered"],
              ...extra,
            } as never,
          }),
        ) as Promise<WebhookWithSecret>;
      endpoint = await create(PASSWORD, { signature_scheme: "standard-webhooks", ordering: "fifo" });
      refused = await create(WRONG, {});
    });

    afterAll(async () => {
      await tail?.close();
      await world?.close();
      await rabbit?.close();
    });

    const publish = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const resource = RESOURCES[published.length % RESOURCES.length]!;
        published.push({ id: await publishAbout(herald.baseUrl, world.token, resource), resource });
      }
    };
    const consumed = () => new Set(tail.records.map(eventOf));
    const ids = () => published.map((p) => p.id).sort();

    it("delivers verifiable messages, each with its confirm's receipt recorded", async () => {
      await publish(BEFORE);
      await waitUntil(
        () => consumed().size === BEFORE,
        () => `${consumed().size} of ${BEFORE} consumed`,
      );
      for (const r of tail.records) {
        await verifyConsumed(r, endpoint);
        expect(r.place.message_id).toBe(eventOf(r));
      }
      const succeeded = await allDeliveries(world.client(herald.baseUrl), endpoint.id, "succeeded");
      expect(succeeded.map((d) => d.event_id).sort()).toEqual(ids());
      for (const d of succeeded) {
        expect(d.response_status).toBeNull();
        expect(d.url).toMatch(/^amqp:\/\/herald@127\.0\.0\.1:\d+/);
        expect(Object.keys(d.receipt ?? {})).toEqual(["delivery_tag"]);
        expect(d.receipt?.delivery_tag).toBeGreaterThanOrEqual(1);
      }
    });

    it("loses nothing across a node killed and started again, and keeps each resource's order", async () => {
      const client = world.client(herald.baseUrl);
      await rabbit.halt("kill");
      await publish(DURING);
      await waitUntil(
        async () => (await allDeliveries(client, endpoint.id, "failed")).length >= 2,
        () => "two failed attempts while the node is down",
      );
      await rabbit.resume();
      const total = BEFORE + DURING;
      await waitUntil(
        () => consumed().size === total,
        () => `${consumed().size} of ${total} consumed`,
      );
      expect([...consumed()].sort()).toEqual(ids());
      for (const r of tail.records) await verifyConsumed(r, endpoint);
      // One queue: the consumed order is the order the node stored them in.
      for (const resource of RESOURCES) {
        const mine = published.filter((p) => p.resource === resource).map((p) => p.id);
        expect(collapsed(tail.records.map(eventOf).filter((id) => mine.includes(id)))).toEqual(mine);
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
      }
      expect(failed.some((d) => d.event_id === published[BEFORE]!.id)).toBe(true);
    });

    it("records a refused password as auth_error, and never shows either password", async () => {
      const client = world.client(herald.baseUrl);
      await waitUntil(
        async () => (await allDeliveries(client, refused.id, "failed")).some((d) => d.error === "auth_error"),
        () => "an auth_error attempt of the endpoint with the wrong password",
      );
      const got = await unwrap(
        client.GET("/api/v1/webhooks/{id}", { params: { path: { id: endpoint.id } } }),
      );
      expect(got).toMatchObject({ kind: "rabbitmq", rabbitmq: { password: "********" } });
      const answers = await everyAnswer(herald.baseUrl, world.token, [endpoint.id, refused.id]);
      expect(answers.join("\n")).toContain(names.exchange);
      expectNoCredential(
        {
          "the API's answers": [...answers, JSON.stringify(endpoint), JSON.stringify(refused)],
          "Herald's log": [herald.output()],
        },
        [PASSWORD, WRONG],
      );
      // What was searched is Herald's whole output (at debug level), the requests about these endpoints in it.
      expect(herald.output()).toContain(`/api/v1/webhooks/${refused.id}/deliveries`);
    });
  },
);
