import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemResolve } from "../../src/adapters/delivery/guarded-lookup.ts";
import { nodeHmac } from "../../src/adapters/delivery/node-hmac.ts";
import { createSqsSender } from "../../src/adapters/destinations/sqs.ts";
import { type HttpPost, undiciPost } from "../../src/adapters/destinations/sqs-http.ts";
import type { BrokerDeliveryRequest } from "../../src/app/ports/sending.ts";
import { BROKERS_REQUIRED, type BrokerServer } from "../support/broker-server.ts";
import {
  type StringAttributes,
  sqsCall,
  sqsReceiveAll,
  sqsUnavailable,
  startSqs,
} from "../support/sqs-server.ts";
import { brokerRequest, sqsDestination, verifies } from "./helpers.ts";

// The SQS sender's batching against ElasticMQ (ADR 27, "SQS: SendMessageBatch"): deliveries to one queue
// started in one turn go in SendMessageBatch requests, counted through the `post` option; each message
// arrives byte for byte and verifiable, each receipt is its own message's, and an entry SQS refuses fails
// alone. Signing is node:crypto's, as Herald's on Node, so a turn's sends all reach the queue in that turn.
const missing = sqsUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs an SQS-compatible server: ${missing}`);

interface Received {
  MessageId: string;
  ReceiptHandle: string;
  Body: string;
  MessageAttributes?: StringAttributes;
  Attributes?: Record<string, string>;
}

describe.skipIf(missing)(`the SQS sender's batches${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let sqs: BrokerServer;
  const real = undiciPost({ timeoutMs: 10_000, resolve: systemResolve, isBlocked: () => false });
  /** Each SQS request: its action and, for a send, the message bodies it carried. */
  const sent: { action: string; bodies: string[] }[] = [];
  const post: HttpPost = async (url, headers, body, signal) => {
    const action = (headers["x-amz-target"] ?? "").replace("AmazonSQS.", "");
    const input = JSON.parse(body) as { MessageBody?: string; Entries?: { MessageBody: string }[] };
    const bodies = input.Entries?.map((e) => e.MessageBody) ?? (input.MessageBody ? [input.MessageBody] : []);
    sent.push({ action, bodies });
    return real(url, headers, body, signal);
  };
  const sender = createSqsSender({ timeoutMs: 10_000, allowPrivateNetworks: true, post, hmac: nodeHmac });
  const run = Date.now().toString(36);
  const createQueue = async (name: string, attributes: Record<string, string> = {}) =>
    String(
      (
        await sqsCall(sqs.env, "CreateQueue", {
          QueueName: `${name}-${run}${attributes.FifoQueue ? ".fifo" : ""}`,
          Attributes: attributes,
        })
      ).QueueUrl,
    );
  const headersOf = (m: Received) =>
    Object.fromEntries(Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue]));
  /** Sends `requests` from one turn, after one send that read the queue's size limit. */
  const sendTogether = async (first: BrokerDeliveryRequest, requests: BrokerDeliveryRequest[]) => {
    expect((await sender.send(first)).error).toBeNull();
    sent.length = 0;
    return Promise.all(requests.map((r) => sender.send(r)));
  };

  beforeAll(async () => {
    sqs = await startSqs();
  });
  afterAll(async () => {
    await sender.close();
    await real.close();
    await sqs?.close();
  });

  it("sends a turn's deliveries in fewer requests, each arriving verifiable with its own receipt; an entry SQS refuses fails alone", async () => {
    const dest = sqsDestination(sqs.env, await createQueue("batched"));
    const requests = Array.from({ length: 12 }, (_, i) =>
      brokerRequest(dest, { scheme: i % 2 === 0 ? "herald-v1" : "standard-webhooks" }),
    );
    // SQS refuses a body with a character outside XML's (InvalidMessageContents); Herald refuses one over the
    // queue's MaximumMessageSize (256 KiB: ElasticMQ names none) before sending it.
    const refused = brokerRequest(dest, { body: '{"bad":"\u0000"}' });
    const tooLarge = brokerRequest(dest, { body: JSON.stringify({ pad: "x".repeat(262_144) }) });
    requests.splice(3, 0, refused);
    requests.splice(7, 0, tooLarge);
    const outcomes = await sendTogether(brokerRequest(dest), requests);

    expect(outcomes.map((o) => o.error)).toEqual(
      requests.map((r) => (r === refused ? "broker_rejected" : r === tooLarge ? "message_too_large" : null)),
    );
    const rejected = outcomes[requests.indexOf(refused)];
    expect(rejected?.responseBody).toBe("SendMessageBatch: InvalidAttributeValue: InvalidMessageContents");
    // 13 of the 14 went to SQS (not the one too large), in the order sent: 10 in one batch, the refused one
    // among them, and 3 in another.
    expect(sent.map((s) => [s.action, s.bodies.length])).toEqual([
      ["SendMessageBatch", 10],
      ["SendMessageBatch", 3],
    ]);
    expect(sent[0]?.bodies).toContain(refused.body);
    expect(sent.flatMap((s) => s.bodies)).toEqual(requests.filter((r) => r !== tooLarge).map((r) => r.body));

    const stored = requests.filter((r) => r !== refused && r !== tooLarge);
    const got = await sqsReceiveAll<Received>(sqs.env, dest.queueUrl, stored.length + 1);
    // The first send's message, then each of the turn's, once.
    expect(got).toHaveLength(stored.length + 1);
    for (const req of stored) {
      const receipt = outcomes[requests.indexOf(req)]?.receipt;
      const m = got.find((g) => g.MessageId === receipt?.message_id);
      expect(m?.Body, `the message of ${req.eventId}`).toBe(req.body);
      expect(receipt).toEqual({ message_id: m?.MessageId });
      const headers = m ? headersOf(m) : {};
      expect(await verifies(req.scheme, req.body, headers)).toBe(true);
      expect(headers["X-Webhook-Id"] ?? headers["webhook-id"]).toBe(req.eventId);
    }
  });

  it("sends a FIFO queue's turn in one request, stored in the order sent with each group and deduplication id", async () => {
    const dest = sqsDestination(sqs.env, await createQueue("ordered", { FifoQueue: "true" }));
    const requests = Array.from({ length: 6 }, (_, i) =>
      brokerRequest(dest, { messageKey: i % 2 === 0 ? "order_1" : "order_2" }),
    );
    // A manual retry of the first is a deliberate resend: its own deduplication id.
    requests.push({ ...(requests[0] as BrokerDeliveryRequest), deduplicationId: "manual_1" });
    const outcomes = await sendTogether(brokerRequest(dest, { messageKey: "order_0" }), requests);
    expect(outcomes.map((o) => o.error)).toEqual(requests.map(() => null));
    expect(sent.map((s) => [s.action, s.bodies.length])).toEqual([["SendMessageBatch", 7]]);

    const got = await sqsReceiveAll<Received>(sqs.env, dest.queueUrl, 8);
    const mine = got.filter((m) => m.Attributes?.MessageGroupId !== "order_0");
    for (const group of ["order_1", "order_2"]) {
      const expected = requests.filter((r) => r.messageKey === group);
      expect(
        mine
          .filter((m) => m.Attributes?.MessageGroupId === group)
          .map((m) => [m.MessageId, m.Body, m.Attributes?.MessageDeduplicationId]),
      ).toEqual(
        expected.map((r) => [outcomes[requests.indexOf(r)]?.receipt?.message_id, r.body, r.deduplicationId]),
      );
    }
  });
});
