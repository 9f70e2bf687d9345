import { connect, type GetMessage } from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRabbitmqSender } from "../../src/adapters/destinations/rabbitmq.ts";
import type { BrokerSender } from "../../src/app/ports/sending.ts";
import type { SendOutcome } from "../../src/domain/delivery.ts";
import type { RabbitmqDestination } from "../../src/domain/destination.ts";
import { BROKERS_REQUIRED, type BrokerServer, run } from "../support/broker-server.ts";
import { rabbitmqUnavailable, startRabbitmq } from "../support/rabbitmq-server.ts";
import { until } from "../support/until.ts";
import { brokerRequest } from "./helpers.ts";

// The RabbitMQ sender when the node goes away and comes back, and against the node's message size limit:
// always a node of this file's own (scripts/rabbitmq.sh), since it is stopped and reconfigured.
const missing = rabbitmqUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs RabbitMQ: ${missing}`);

describe.skipIf(missing)(`the RabbitMQ sender and its node${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let rabbit: BrokerServer;
  let sender: BrokerSender;
  let url: string;
  const queue = "outage-orders";
  const destination = (): RabbitmqDestination => ({
    kind: "rabbitmq",
    url: url.replace("guest:guest@", "guest@"),
    password: "guest",
    exchange: "",
    routingKey: queue,
  });
  const ctl = (...args: string[]) =>
    run("scripts/rabbitmq.sh", ["ctl", ...args], { RABBITMQ_STATE: rabbit.state ?? "" });
  const queued = async (): Promise<string[]> => {
    const model = await connect(url);
    try {
      const ch = await model.createChannel();
      const ids: string[] = [];
      for (let m: GetMessage | false = await ch.get(queue); m; m = await ch.get(queue)) {
        ids.push(String(m.properties.messageId));
      }
      return ids;
    } finally {
      await model.close();
    }
  };

  const queueIsBack = async (): Promise<boolean> => {
    const model = await connect(url).catch(() => null);
    if (!model) return false;
    // A missing queue closes the channel with a 404 and says so as an event too: heard here, not unhandled.
    model.on("error", () => {});
    try {
      await (await model.createChannel()).checkQueue(queue);
      return true;
    } catch {
      return false;
    } finally {
      await model.close().catch(() => {});
    }
  };

  beforeAll(async () => {
    rabbit = await startRabbitmq(true);
    url = rabbit.env.RABBITMQ_URL ?? "";
    const model = await connect(url);
    await (await model.createChannel()).assertQueue(queue, { durable: true });
    await model.close();
    sender = createRabbitmqSender({ timeoutMs: 10_000, allowPrivateNetworks: true });
  });
  afterAll(async () => {
    await sender?.close();
    await rabbit?.close();
  });

  it("fails the sends while the node is down, sends again once it is back, and loses nothing it confirmed", async () => {
    const confirmed: string[] = [];
    const outcomes: SendOutcome[] = [];
    const sendOne = async () => {
      const req = brokerRequest(destination(), { endpointId: "ep_outage" });
      const outcome = await sender.send(req);
      outcomes.push(outcome);
      if (outcome.ok) confirmed.push(req.eventId);
      return outcome;
    };
    expect((await sendOne()).ok).toBe(true);

    // A stream of sends while the node stops: each settles, as a confirm or a failure.
    let stop = false;
    const stream = (async () => {
      while (!stop) await Promise.all([sendOne(), sendOne(), sendOne()]);
    })();
    await until(() => outcomes.length > 30, "sends before the stop");
    // A clean stop, not a kill: with a kill, the node came back without its durable queue in 2 of 2 CI runs
    // (never here, 3 of 3), which is the broker's durability, not the sender's; a confirmed message
    // surviving a kill is test/brokers/rabbitmq.test.ts's and test/e2e/destinations-rabbitmq.test.ts's.
    await rabbit.halt("clean");
    await until(() => outcomes.some((o) => !o.ok), "a failed send after the stop");
    stop = true;
    await stream;

    const down = await sendOne();
    expect(down).toMatchObject({ ok: false, error: "connection_error" });
    const failures = new Set(outcomes.filter((o) => !o.ok).map((o) => o.error));
    expect([...failures].every((e) => e === "connection_error" || e === "timeout")).toBe(true);

    await rabbit.resume();
    // The node takes connections before it has brought every durable queue back (a loaded CI machine saw
    // a message to the queue returned as unroutable right after the restart): wait until the queue is
    // there, so what follows asks only what this test is about. A queue that never comes back fails here.
    await until(queueIsBack, "the durable queue back after the restart", { timeoutMs: 60_000 });
    const back = await sendOne();
    expect(back).toMatchObject({ ok: true, error: null });
    // Every confirmed message survived the stop (persistent, durable queue); one sent once only.
    const ids = await queued();
    expect(ids.filter((id) => confirmed.includes(id)).sort()).toEqual([...confirmed].sort());
  });

  it("names a message over the node's max_message_size message_too_large", async () => {
    await ctl("eval", "application:set_env(rabbit, max_message_size, 4096).");
    try {
      // A channel reads the limit when it opens: a new endpoint has a new connection and channel.
      const big = brokerRequest(destination(), {
        endpointId: "ep_size",
        body: JSON.stringify({ pad: "x".repeat(5_000) }),
      });
      const outcome = await sender.send(big);
      expect(outcome).toMatchObject({ ok: false, error: "message_too_large" });
      expect(outcome.responseBody).toContain("larger than configured max size");
      const small = await sender.send(brokerRequest(destination(), { endpointId: "ep_size" }));
      expect(small).toMatchObject({ ok: true });
    } finally {
      await ctl("eval", "application:set_env(rabbit, max_message_size, 134217728).");
    }
  });
});
