import { Socket } from "node:net";
import { type Channel, type ChannelModel, connect, type GetMessage } from "amqplib";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { nodeHmac } from "../../src/adapters/delivery/node-hmac.ts";
import { createRabbitmqSender } from "../../src/adapters/destinations/rabbitmq.ts";
import type { BrokerSender } from "../../src/app/ports/sending.ts";
import type { RabbitmqDestination } from "../../src/domain/destination.ts";
import { BROKERS_REQUIRED, type BrokerServer } from "../support/broker-server.ts";
import { rabbitmqUnavailable, startRabbitmq } from "../support/rabbitmq-server.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";
import { until } from "../support/until.ts";
import { brokerRequest, names, verifies } from "./helpers.ts";

// The RabbitMQ sender against a real node (the run's, or one of this file's own by scripts/rabbitmq.sh):
// what it publishes is read back by a separate amqplib consumer and checked byte for byte and by signature;
// each refusal the broker can make is named. Outages and the size limit: rabbitmq-outage.test.ts.
const missing = rabbitmqUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs RabbitMQ: ${missing}`);

describe.skipIf(missing)(`the RabbitMQ sender${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let rabbit: BrokerServer;
  let admin: ChannelModel;
  let ch: Channel;
  let sender: BrokerSender;
  let base: URL;
  const run = Date.now().toString(36);

  /** A destination on the test node: `amqp://guest@127.0.0.1:port/%2f`, the password apart. */
  const destination = (over: Partial<RabbitmqDestination> = {}): RabbitmqDestination => ({
    kind: "rabbitmq",
    url: `amqp://guest@${base.host}/%2f`,
    password: "guest",
    exchange: `events-${run}`,
    routingKey: "orders",
    ...over,
  });
  const drain = async (queue: string, want: number): Promise<GetMessage[]> => {
    const got: GetMessage[] = [];
    await until(async () => {
      for (let m = await ch.get(queue, { noAck: true }); m; m = await ch.get(queue, { noAck: true }))
        got.push(m);
      return got.length >= want;
    }, `${want} messages in ${queue}`);
    return got;
  };

  beforeAll(async () => {
    rabbit = await startRabbitmq();
    base = new URL(rabbit.env.RABBITMQ_URL ?? "");
    admin = await connect(rabbit.env.RABBITMQ_URL ?? "");
    ch = await admin.createChannel();
    await ch.assertExchange(`events-${run}`, "direct", { durable: true });
    await ch.assertQueue(`orders-${run}`, { durable: true });
    await ch.bindQueue(`orders-${run}`, `events-${run}`, "orders");
    sender = createRabbitmqSender({ timeoutMs: 10_000, allowPrivateNetworks: true });
  });
  afterAll(async () => {
    await sender?.close();
    await admin?.close().catch(() => {});
    await rabbit?.close();
  });

  it("publishes pipelined sends on one connection, each confirmed, as verifiable persistent messages", async () => {
    const queue = `orders-${run}`;
    const requests = Array.from({ length: 24 }, (_, i) =>
      brokerRequest(destination(), {
        scheme: i % 3 === 0 ? "herald-v1" : "standard-webhooks",
        traceparent: i === 1 ? "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" : undefined,
      }),
    );
    const outcomes = await Promise.all(requests.map((r) => sender.send(r)));
    expect(outcomes.map((o) => [o.ok, o.error, o.responseStatus])).toEqual(
      requests.map(() => [true, null, null]),
    );
    const tags = outcomes.map((o) => o.receipt?.delivery_tag);
    expect(new Set(tags).size).toBe(24);
    expect(tags.every((t) => typeof t === "number" && t >= 1)).toBe(true);

    const got = await drain(queue, 24);
    expect(got).toHaveLength(24);
    for (const m of got) {
      const req = requests.find((r) => r.eventId === m.properties.messageId);
      expect(req, `a message with id ${m.properties.messageId}`).toBeDefined();
      if (!req) continue;
      expect(m.content.equals(Buffer.from(req.body))).toBe(true);
      expect(m.properties.contentType).toBe("application/json");
      expect(m.properties.deliveryMode).toBe(2);
      const headers = Object.fromEntries(
        Object.entries(m.properties.headers ?? {}).map(([k, v]) => [
          k,
          Buffer.isBuffer(v) ? v.toString() : String(v),
        ]),
      );
      expect(await verifies(req.scheme, m.content.toString(), headers)).toBe(true);
      expect(headers["X-Tenant"]).toBe("acme");
      const idName = req.scheme === "herald-v1" ? "X-Webhook-Id" : "webhook-id";
      expect(headers[idName]).toBe(req.eventId);
      expect(headers.traceparent).toBe(req.traceparent);
      // A tampered body does not verify: the check above can fail.
      expect(await verifies(req.scheme, `${m.content.toString()} `, headers)).toBe(false);
    }
  });

  it("writes the messages published in one turn to the socket together, in one write", async () => {
    // Node's signer answers at once, as in Herald on Node: the ten sends reach amqplib in one turn.
    const s = createRabbitmqSender({ timeoutMs: 10_000, allowPrivateNetworks: true, hmac: nodeHmac });
    const writes = {
      one: vi.spyOn(Socket.prototype as unknown as { _write: () => void }, "_write"),
      many: vi.spyOn(Socket.prototype as unknown as { _writev: (chunks: unknown[]) => void }, "_writev"),
    };
    try {
      // Connected and its channel open first: the handshake's own writes are not counted.
      expect((await s.send(brokerRequest(destination()))).ok).toBe(true);
      await drain(`orders-${run}`, 1);
      writes.one.mockClear();
      writes.many.mockClear();
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, () => s.send(brokerRequest(destination()))),
      );
      expect(outcomes.every((o) => o.ok)).toBe(true);
      const toBroker = (spy: typeof writes.one | typeof writes.many) =>
        spy.mock.calls.filter((_, i) => (spy.mock.contexts[i] as Socket).remotePort === Number(base.port));
      expect(toBroker(writes.one)).toHaveLength(0);
      expect(toBroker(writes.many).map(([chunks]) => (chunks as unknown[]).length)).toEqual([10]);
      await drain(`orders-${run}`, 10);
    } finally {
      writes.one.mockRestore();
      writes.many.mockRestore();
      await s.close();
    }
  });

  it("fails an unroutable message and a missing exchange, then sends again on the replaced channel", async () => {
    const unroutable = await sender.send(brokerRequest(destination({ routingKey: "nobody-binds-this" })));
    expect(unroutable).toMatchObject({ ok: false, error: "unroutable", responseStatus: null });
    expect(unroutable.responseBody).toContain("NO_ROUTE");

    const exchange = `later-${run}`;
    const dest = destination({ exchange });
    const req = { endpointId: "ep_missing", version: 1 };
    const first = await sender.send(brokerRequest(dest, req));
    expect(first).toMatchObject({ ok: false, error: "destination_not_found" });
    expect(first.responseBody).toContain(`no exchange '${exchange}'`);

    await ch.assertExchange(exchange, "direct", { durable: true });
    await ch.assertQueue(`later-${run}`, { durable: true });
    await ch.bindQueue(`later-${run}`, exchange, "orders");
    const second = await sender.send(brokerRequest(dest, req));
    expect(second).toMatchObject({ ok: true, error: null });
    // The connection was kept: the new channel numbers its publishes from 1 again.
    expect(second.receipt).toEqual({ delivery_tag: 1 });
    expect(await drain(`later-${run}`, 1)).toHaveLength(1);
  });

  it("publishes to a queue through the default exchange", async () => {
    const queue = `direct-${run}`;
    await ch.assertQueue(queue, { durable: true });
    const req = brokerRequest(destination({ exchange: "", routingKey: queue }), { endpointId: "ep_default" });
    expect(await sender.send(req)).toMatchObject({ ok: true, receipt: { delivery_tag: 1 } });
    const [m] = await drain(queue, 1);
    expect(m?.content.toString()).toBe(req.body);
  });

  it("names a refused login auth_error without the password, and refuses private addresses unless allowed", async () => {
    const wrong = await sender.send(
      brokerRequest(destination({ password: "not-the-password-4e1f" }), { endpointId: "ep_wrong" }),
    );
    expect(wrong).toMatchObject({ ok: false, error: "auth_error" });
    expect(wrong.responseBody).toContain("ACCESS_REFUSED");
    expect(wrong.responseBody).not.toContain("not-the-password-4e1f");

    const guarded = createRabbitmqSender({
      timeoutMs: 10_000,
      allowPrivateNetworks: false,
      lookup: names({ "mq.example.test": "10.1.2.3" }),
    });
    try {
      const urls = [
        `amqp://guest@${base.host}/%2f`,
        "amqps://guest@mq.example.test/prod",
        "amqps://guest@nowhere.example.test/prod",
      ];
      const outcomes = await Promise.all(
        urls.map((url, i) => guarded.send(brokerRequest(destination({ url }), { endpointId: `ep_g${i}` }))),
      );
      expect(outcomes.map((o) => o.error)).toEqual(["blocked_address", "blocked_address", "dns_error"]);
    } finally {
      await guarded.close();
    }
  });

  it("keeps one connection per endpoint and version, and opens a new one after release, a new version or a timeout", async () => {
    const proxy = await startTcpProxy({ host: base.hostname, port: Number(base.port) });
    const pooled = createRabbitmqSender({ timeoutMs: 1_500, allowPrivateNetworks: true });
    try {
      const dest = destination({ url: `amqp://guest@127.0.0.1:${proxy.port}/%2f` });
      const send = (version: number) => pooled.send(brokerRequest(dest, { endpointId: "ep_pool", version }));
      for (let i = 0; i < 3; i++) expect((await send(1)).ok).toBe(true);
      expect(proxy.accepted).toBe(1);
      expect((await send(2)).ok).toBe(true);
      expect(proxy.accepted).toBe(2);
      await pooled.release("ep_pool");
      expect((await send(2)).ok).toBe(true);
      expect(proxy.accepted).toBe(3);

      // A broker that stops answering: the send times out and its connection is not used again.
      await proxy.cut("silence");
      expect(await send(2)).toMatchObject({ ok: false, error: "timeout" });
      await proxy.restore();
      expect((await send(2)).ok).toBe(true);
      expect(proxy.accepted).toBe(4);
    } finally {
      await pooled.close();
      await proxy.close();
    }
  });

  it("closes a connection left idle", async () => {
    const proxy = await startTcpProxy({ host: base.hostname, port: Number(base.port) });
    const idle = createRabbitmqSender({ timeoutMs: 10_000, allowPrivateNetworks: true, idleMs: 1_000 });
    try {
      const dest = destination({ url: `amqp://guest@127.0.0.1:${proxy.port}/%2f` });
      const send = () => idle.send(brokerRequest(dest, { endpointId: "ep_idle" }));
      expect((await send()).ok).toBe(true);
      expect((await send()).ok).toBe(true);
      expect(proxy.accepted).toBe(1);
      // Asked less often than the idle limit (with a sweep every second), so each time the last connection
      // has been idle long enough to be closed, and the send opens a new one.
      await until(
        async () => {
          expect((await send()).ok).toBe(true);
          return proxy.accepted > 1;
        },
        "a new connection after the idle one was closed",
        { everyMs: 2_500 },
      );
    } finally {
      await idle.close();
      await proxy.close();
    }
  });
});
