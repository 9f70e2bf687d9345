import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrokerServer } from "../support/broker-server.ts";
import { BROKERS_REQUIRED, javaProgram } from "../support/broker-server.ts";
import { amqpClientJars, rabbitmqUnavailable, startRabbitmq } from "../support/rabbitmq-server.ts";

// The server issue 28's RabbitMQ destinations will be tested on: scripts/rabbitmq.sh's throwaway node,
// driven by RabbitMQ's own Java client on a confirm channel with `mandatory`, the way Herald must publish:
// acked and routed is stored, returned is unroutable (a failure), and a missing exchange closes the channel.
// Always a node of this file's own, even when the run has one: the script is what is tested, and it is
// killed.
const missing = rabbitmqUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs RabbitMQ: ${missing}`);

interface Outcome {
  id: string;
  outcome: string;
}
interface Got {
  got: string;
  messageId: string;
  deliveryMode: number;
  headers: Record<string, string>;
  left: number;
}

describe.skipIf(missing)(`RabbitMQ by scripts/rabbitmq.sh${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let rabbit: BrokerServer;
  beforeAll(async () => {
    rabbit = await startRabbitmq(true);
  });
  afterAll(async () => {
    await rabbit?.close();
  });

  it("confirms a routed publish, returns an unroutable one, and closes the channel on a missing exchange", async () => {
    const url = rabbit.env.RABBITMQ_URL ?? "";
    expect(url).toMatch(/^amqp:\/\/guest:guest@127\.0\.0\.1:\d+\/%2f$/);
    const lines = await javaProgram("RabbitRoundTrip.java", await amqpClientJars(), [
      url,
      `roundtrip${Date.now()}`,
    ]);
    const outcomes = Object.fromEntries(
      lines
        .filter((l): l is Outcome => typeof (l as Outcome).outcome === "string")
        .map((o) => [o.id, o.outcome]),
    );
    expect(outcomes).toEqual({ msg_1: "acked", msg_2: "returned", msg_3: "closed 404" });

    // Only the routed message reached the queue, persistent, with its body and headers as published.
    const got = lines.filter((l): l is Got => typeof (l as Got).got === "string");
    expect(got).toEqual([
      {
        got: '{"id":"msg_1"}',
        messageId: "msg_1",
        deliveryMode: 2,
        headers: { "webhook-id": "msg_1", "webhook-signature": "v1,c2lnbmF0dXJl" },
        left: 0,
      },
    ]);
  });

  it("still holds a confirmed persistent message after the node is killed and resumed", async () => {
    const url = rabbit.env.RABBITMQ_URL ?? "";
    const name = `crash${Date.now()}`;
    const jars = await amqpClientJars();
    const before = await javaProgram("RabbitRoundTrip.java", jars, [url, name, "persist"]);
    expect(before).toEqual([{ id: "msg_1", outcome: "acked" }]);

    await rabbit.halt("kill");
    await rabbit.resume();

    const after = await javaProgram("RabbitRoundTrip.java", jars, [url, name, "fetch"]);
    expect(after.filter((l) => typeof (l as Got).got === "string")).toEqual([
      {
        got: '{"id":"msg_1"}',
        messageId: "msg_1",
        deliveryMode: 2,
        headers: { "webhook-id": "msg_1", "webhook-signature": "v1,c2lnbmF0dXJl" },
        left: 0,
      },
    ]);
  });
});
