import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSqsSender } from "../../src/adapters/destinations/sqs.ts";
import type { BrokerSender } from "../../src/app/ports/sending.ts";
import type { SendOutcome } from "../../src/domain/delivery.ts";
import { BROKERS_REQUIRED, type BrokerServer } from "../support/broker-server.ts";
import { sqsCall, sqsUnavailable, startSqs } from "../support/sqs-server.ts";
import { until } from "../support/until.ts";
import { brokerRequest, sqsDestination } from "./helpers.ts";

// The SQS sender when the server goes away and comes back: always a server of this file's own
// (scripts/sqs.sh), since it is killed.
const missing = sqsUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs an SQS-compatible server: ${missing}`);

describe.skipIf(missing)(`the SQS sender and its server${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let sqs: BrokerServer;
  let sender: BrokerSender;
  let queue: string;
  const call = (action: string, input: object) => sqsCall(sqs.env, action, input);

  beforeAll(async () => {
    sqs = await startSqs(true);
    queue = String(
      (await call("CreateQueue", { QueueName: "outage.fifo", Attributes: { FifoQueue: "true" } })).QueueUrl,
    );
    sender = createSqsSender({ timeoutMs: 10_000, allowPrivateNetworks: true });
  });
  afterAll(async () => {
    await sender?.close();
    await sqs?.close();
  });

  it("fails the sends while the server is down, sends again once it is back, and loses nothing it stored", async () => {
    const destination = sqsDestination(sqs.env, queue);
    const stored: string[] = [];
    const outcomes: SendOutcome[] = [];
    const sendOne = async () => {
      const req = brokerRequest(destination, { endpointId: "ep_outage", messageKey: "order_1" });
      const outcome = await sender.send(req);
      outcomes.push(outcome);
      if (outcome.ok) stored.push(String(outcome.receipt?.message_id));
      return outcome;
    };
    expect((await sendOne()).ok).toBe(true);

    let stop = false;
    const stream = (async () => {
      while (!stop) await Promise.all([sendOne(), sendOne()]);
    })();
    await until(() => outcomes.length > 20, "sends before the kill");
    await sqs.halt("kill");
    await until(() => outcomes.some((o) => !o.ok), "a failed send after the kill");
    stop = true;
    await stream;

    expect(await sendOne()).toMatchObject({ ok: false, error: "connection_error" });
    const failures = new Set(outcomes.filter((o) => !o.ok).map((o) => o.error));
    expect([...failures].every((e) => e === "connection_error" || e === "timeout")).toBe(true);

    await sqs.resume();
    expect(await sendOne()).toMatchObject({ ok: true, error: null });

    // Everything SendMessage answered for is in the queue (a send that failed may have been stored too).
    const got: string[] = [];
    for (let round = 0; round < 60 && got.length < stored.length; round++) {
      const answer = await call("ReceiveMessage", {
        QueueUrl: queue,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
      });
      for (const m of (answer.Messages ?? []) as { MessageId: string; ReceiptHandle: string }[]) {
        got.push(m.MessageId);
        await call("DeleteMessage", { QueueUrl: queue, ReceiptHandle: m.ReceiptHandle });
      }
    }
    expect(stored.filter((id) => !got.includes(id))).toEqual([]);
  });
});
