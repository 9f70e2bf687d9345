import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookWithSecret } from "../../clients/typescript/client.ts";
import { type AmqpTail, startAmqpTail } from "../support/amqp-tail.ts";
import { type BrokerServer, run } from "../support/broker-server.ts";
import {
  brokerTitle,
  type DestinationSystem,
  destinationSystem,
  expectCredentialsHidden,
  expectNothingLost,
  logLines,
  OUTAGE_ENV,
} from "../support/destination-system.ts";
import { eventOf, verifyConsumed } from "../support/destinations-e2e.ts";
import type { HeraldProcess } from "../support/herald-process.ts";
import { rabbitmqUnavailable, startRabbitmqTls } from "../support/rabbitmq-server.ts";
import { testTls } from "../support/tls.ts";
import { allDeliveries, waitUntil } from "./delivery-support.ts";

// Issue 28 from outside, amqps: a RabbitMQ node with a TLS listener (scripts/rabbitmq.sh given a
// certificate of a throwaway CA made by openssl, test/support/tls.ts) and an endpoint on its amqps URL.
// Herald trusts CAs the way it does for HTTPS endpoints: the runtime's store, here NODE_EXTRA_CA_CERTS.
// First a process that trusts another CA: each attempt fails at once as tls_error (not a hang, not a
// timeout), logged, retried. Then a process that trusts the node's CA: every event arrives over TLS (the
// node lists Herald's connection as TLS), verifiable, none lost, the password in no answer or log line.
const missing = rabbitmqUnavailable();
const title = brokerTitle("RabbitMQ", missing);

const PASSWORD = "amqps-Pa55word-e2e-0b7d";
const EVENTS = 4;

describe.skipIf(missing)(`RabbitMQ over amqps, whole system${title}`, () => {
  let rabbit: BrokerServer;
  let system: DestinationSystem;
  let tail: AmqpTail;
  let endpoint: WebhookWithSecret;
  let trusting: HeraldProcess;
  const names = { exchange: `e2e-tls-x-${Date.now()}`, queue: `e2e-tls-q-${Date.now()}` };
  const ctl = (...args: string[]) =>
    run("scripts/rabbitmq.sh", ["ctl", ...args], { RABBITMQ_STATE: rabbit.state ?? "" });

  beforeAll(async () => {
    const [tls, other] = await Promise.all([testTls(), testTls("other")]);
    rabbit = await startRabbitmqTls(tls);
    await ctl("add_user", "herald", PASSWORD);
    await ctl("set_permissions", "-p", "/", "herald", ".*", ".*", ".*");
    // This process trusts the other CA only (and the system's): the node's certificate is not trusted.
    system = await destinationSystem("e2e_dest_rabbitmq_tls", [randomUUID()], {
      HERALD_LOG_LEVEL: "debug",
      ...OUTAGE_ENV,
      NODE_EXTRA_CA_CERTS: other.caCertPath,
    });
    // The consumer reads on the plain listener: what it gets is what the node stored.
    tail = await startAmqpTail(rabbit.env.RABBITMQ_URL ?? "", names.exchange, names.queue, "orders");
    const url = (rabbit.env.RABBITMQ_TLS_URL ?? "").replace("guest:guest@", "herald@");
    expect(url).toMatch(/^amqps:\/\/herald@127\.0\.0\.1:\d+\/%2f$/);
    endpoint = await system.create({
      kind: "rabbitmq",
      rabbitmq: { url, password: PASSWORD, exchange: names.exchange, routing_key: "orders" },
    });
  });

  afterAll(async () => {
    await tail?.close();
    await system?.close();
    await rabbit?.close();
  });

  it("fails a certificate of a CA Herald does not trust as tls_error, at once, logged and retried", async () => {
    const { client, herald } = system;
    await system.publish(EVENTS);
    await waitUntil(
      async () => (await allDeliveries(client, endpoint.id, "failed")).some((d) => d.attempt >= 2),
      () => "a second failed attempt with the untrusted certificate",
    );
    const failed = await allDeliveries(client, endpoint.id, "failed");
    for (const d of failed) expect([d.error, d.receipt]).toEqual(["tls_error", null]);
    const logged = logLines(herald, "broker delivery attempt failed");
    expect(logged.length).toBeGreaterThanOrEqual(2);
    for (const l of logged)
      expect(l).toMatchObject({ kind: "rabbitmq", webhook_id: endpoint.id, error: "tls_error" });
    expect(tail.records).toEqual([]);
    await herald.stop(15_000);
  });

  it("delivers over TLS once Herald trusts the node's CA, none lost", async () => {
    // The world's own CA (testTls()) signed the node's certificate.
    trusting = await system.world.start({ NODE_EXTRA_CA_CERTS: system.world.tls.caCertPath });
    const client = system.world.client(trusting.baseUrl);
    await waitUntil(
      () => new Set(tail.records.map(eventOf)).size === EVENTS,
      () => `${new Set(tail.records.map(eventOf)).size} of ${EVENTS} consumed`,
    );
    expect([...new Set(tail.records.map(eventOf))].sort()).toEqual(system.ids());
    for (const r of tail.records) await verifyConsumed(r, endpoint);
    expectNothingLost(await allDeliveries(client, endpoint.id), system.ids(), ["tls_error"]);
    // The node's own account of Herald's connection: on the TLS listener, over TLS.
    const tlsPort = new URL(rabbit.env.RABBITMQ_TLS_URL ?? "").port;
    const connections = await ctl("-q", "list_connections", "user", "port", "ssl");
    expect(connections.split("\n").map((l) => l.trim().split(/\s+/))).toContainEqual([
      "herald",
      tlsPort,
      "true",
    ]);
  });

  it("shows the password in no answer or log line of either process", async () => {
    const both = { ...system, herald: trusting };
    await expectCredentialsHidden(both, [endpoint.id], [PASSWORD], names.exchange, [
      JSON.stringify(endpoint),
      system.herald.output(),
    ]);
  });
});
