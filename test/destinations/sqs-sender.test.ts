import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemResolve } from "../../src/adapters/delivery/guarded-lookup.ts";
import { createSqsSender } from "../../src/adapters/destinations/sqs.ts";
import { type HttpPost, undiciPost } from "../../src/adapters/destinations/sqs-http.ts";
import type { BrokerSender } from "../../src/app/ports/sending.ts";
import type { SqsDestination } from "../../src/domain/destination.ts";
import { BROKERS_REQUIRED, type BrokerServer } from "../support/broker-server.ts";
import {
  md5OfStringAttributes,
  type StringAttributes,
  sqsCall,
  sqsReceiveAll,
  sqsUnavailable,
  startSqs,
} from "../support/sqs-server.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";
import { until } from "../support/until.ts";
import { brokerRequest, names, sqsDestination, verifies } from "./helpers.ts";

// The SQS sender against ElasticMQ (the run's, or one of this file's own by scripts/sqs.sh): what it sends
// is read back with a raw ReceiveMessage and checked byte for byte and by signature, FIFO groups and
// deduplication ids, the MD5 check, the queue's size limit, the address guard. Outages: sqs-outage.test.ts.
const missing = sqsUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs an SQS-compatible server: ${missing}`);

interface Received {
  MessageId: string;
  ReceiptHandle: string;
  Body: string;
  MessageAttributes?: StringAttributes;
  Attributes?: Record<string, string>;
}

describe.skipIf(missing)(`the SQS sender${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let sqs: BrokerServer;
  let sender: BrokerSender;
  const run = Date.now().toString(36);
  const call = (action: string, input: object) => sqsCall(sqs.env, action, input);
  const createQueue = async (name: string, attributes: Record<string, string> = {}) =>
    String(
      (
        await call("CreateQueue", {
          QueueName: `${name}-${run}${attributes.FifoQueue ? ".fifo" : ""}`,
          Attributes: attributes,
        })
      ).QueueUrl,
    );
  const destination = (queueUrl: string, over: Partial<SqsDestination> = {}) =>
    sqsDestination(sqs.env, queueUrl, over);
  const receiveAll = (queue: string, want: number) => sqsReceiveAll<Received>(sqs.env, queue, want);
  const headersOf = (m: Received) =>
    Object.fromEntries(Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue]));

  beforeAll(async () => {
    sqs = await startSqs();
    sender = createSqsSender({ timeoutMs: 10_000, allowPrivateNetworks: true });
  });
  afterAll(async () => {
    await sender?.close();
    await sqs?.close();
  });

  it("sends verifiable messages whose body and attributes arrive as sent", async () => {
    const queue = await createQueue("standard");
    const requests = Array.from({ length: 12 }, (_, i) =>
      brokerRequest(destination(queue), {
        scheme: i % 2 === 0 ? "herald-v1" : "standard-webhooks",
        traceparent: i === 1 ? "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" : undefined,
      }),
    );
    const outcomes = await Promise.all(requests.map((r) => sender.send(r)));
    expect(outcomes.map((o) => [o.ok, o.error, o.responseStatus])).toEqual(
      requests.map(() => [true, null, null]),
    );
    const got = await receiveAll(queue, 12);
    expect(got).toHaveLength(12);
    for (const [i, req] of requests.entries()) {
      const m = got.find((g) => g.MessageId === outcomes[i]?.receipt?.message_id);
      expect(m, `the message of ${req.eventId}`).toBeDefined();
      if (!m) continue;
      expect(outcomes[i]?.receipt).toEqual({ message_id: m.MessageId });
      expect(m.Body).toBe(req.body);
      const headers = headersOf(m);
      expect(await verifies(req.scheme, m.Body, headers)).toBe(true);
      expect(await verifies(req.scheme, `${m.Body} `, headers)).toBe(false);
      expect(headers["X-Tenant"]).toBe("acme");
      expect(headers.traceparent).toBe(req.traceparent);
      // Standard queues get neither a group nor a deduplication id.
      expect(m.Attributes?.MessageGroupId).toBeUndefined();
    }
  });

  it("gives a FIFO queue the group and deduplication ids: an automatic resend is dropped, a manual one arrives", async () => {
    const queue = await createQueue("ordered", { FifoQueue: "true" });
    const dest = destination(queue);
    const first = brokerRequest(dest, { messageKey: "order_7" });
    const sent = await sender.send(first);
    const again = await sender.send({ ...first, timestamp: first.timestamp + 1 });
    const manual = await sender.send({ ...first, deduplicationId: `${first.eventId}:dlv_2` });
    const later = await sender.send(brokerRequest(dest, { messageKey: "order_7" }));
    expect([sent, again, manual, later].map((o) => o.ok)).toEqual([true, true, true, true]);
    expect(sent.receipt?.sequence_number).toMatch(/^\d+$/);
    // SQS answers a deduplicated resend with the first message's id.
    expect(again.receipt?.message_id).toBe(sent.receipt?.message_id);
    expect(manual.receipt?.message_id).not.toBe(sent.receipt?.message_id);

    const got = await receiveAll(queue, 3);
    expect(
      got.map((m) => [m.MessageId, m.Attributes?.MessageGroupId, m.Attributes?.MessageDeduplicationId]),
    ).toEqual([
      [sent.receipt?.message_id, "order_7", first.eventId],
      [manual.receipt?.message_id, "order_7", `${first.eventId}:dlv_2`],
      [later.receipt?.message_id, "order_7", expect.any(String)],
    ]);
  });

  it("names a missing queue, and refuses a message over the queue's MaximumMessageSize before sending it", async () => {
    const gone = await sender.send(
      brokerRequest(destination(`${sqs.env.SQS_ENDPOINT}/000000000000/nope-${run}`), {
        endpointId: "ep_gone",
      }),
    );
    expect(gone).toMatchObject({ ok: false, error: "destination_not_found", responseStatus: null });
    expect(gone.responseBody).toContain("QueueDoesNotExist");
    expect(gone.responseBody).not.toContain(sqs.env.AWS_SECRET_ACCESS_KEY);

    // ElasticMQ keeps no MaximumMessageSize (GetQueueAttributes answers none): SQS's default, 256 KiB, holds.
    const queue = await createQueue("small");
    const dest = destination(queue);
    const big = brokerRequest(dest, {
      endpointId: "ep_small",
      body: JSON.stringify({ pad: "x".repeat(262_144) }),
    });
    const small = brokerRequest(dest, { endpointId: "ep_small" });
    const refused = await sender.send(big);
    expect(refused).toMatchObject({ ok: false, error: "message_too_large" });
    expect(refused.responseBody).toContain("MaximumMessageSize of 262144");
    expect((await sender.send(small)).ok).toBe(true);
    const got = await receiveAll(queue, 1);
    expect(got.map((m) => m.Body)).toEqual([small.body]);
  });

  it("reads the queue's MaximumMessageSize once per endpoint and version", async () => {
    const queue = await createQueue("limited");
    const real = undiciPost({ timeoutMs: 10_000, resolve: systemResolve, isBlocked: () => false });
    const asked: string[] = [];
    // What AWS answers for a queue limited to 1 KiB, which ElasticMQ cannot be made to say.
    const post: HttpPost = async (url, headers, body, signal) => {
      const action = headers["x-amz-target"] ?? "";
      asked.push(action);
      if (!action.endsWith("GetQueueAttributes")) return real(url, headers, body, signal);
      return { status: 200, body: JSON.stringify({ Attributes: { MaximumMessageSize: "1024" } }) };
    };
    const limited = createSqsSender({ timeoutMs: 10_000, allowPrivateNetworks: true, post });
    try {
      const send = (version: number, pad: number) =>
        limited.send(
          brokerRequest(destination(queue), {
            endpointId: "ep_limited",
            version,
            body: JSON.stringify({ pad: "x".repeat(pad) }),
          }),
        );
      const outcomes = [await send(1, 100), await send(1, 1_000), await send(1, 100), await send(2, 1_000)];
      expect(outcomes.map((o) => o.error)).toEqual([null, "message_too_large", null, "message_too_large"]);
      expect(asked).toEqual([
        "AmazonSQS.GetQueueAttributes",
        "AmazonSQS.SendMessage",
        "AmazonSQS.SendMessage",
        "AmazonSQS.GetQueueAttributes",
      ]);
    } finally {
      await limited.close();
      await real.close();
    }
  });

  it("fails a send whose answered MD5s are not the message's", async () => {
    const queue = await createQueue("md5");
    const real = undiciPost({ timeoutMs: 10_000, resolve: systemResolve, isBlocked: () => false });
    let tamper: "body" | "attributes" | null = null;
    const post: HttpPost = async (url, headers, body, signal) => {
      const answer = await real(url, headers, body, signal);
      if (!tamper || !headers["x-amz-target"]?.endsWith("SendMessage")) return answer;
      const parsed = JSON.parse(answer.body) as Record<string, string>;
      // Which MD5 SQS computed over what it stored is checked independently here, then altered.
      const sent = JSON.parse(body) as { MessageAttributes: StringAttributes };
      expect(parsed.MD5OfMessageAttributes).toBe(md5OfStringAttributes(sent.MessageAttributes));
      if (tamper === "body") parsed.MD5OfMessageBody = "0".repeat(32);
      else parsed.MD5OfMessageAttributes = "0".repeat(32);
      return { ...answer, body: JSON.stringify(parsed) };
    };
    const checking = createSqsSender({ timeoutMs: 10_000, allowPrivateNetworks: true, post });
    try {
      const outcomes = [];
      for (const t of ["body", "attributes", null] as const) {
        tamper = t;
        outcomes.push(await checking.send(brokerRequest(destination(queue), { endpointId: "ep_md5" })));
      }
      expect(outcomes.map((o) => o.error)).toEqual(["broker_rejected", "broker_rejected", null]);
    } finally {
      await checking.close();
      await real.close();
    }
  });

  it("answers timeout when the server stops answering, and sends again once it answers", async () => {
    const queue = await createQueue("slow");
    const proxy = await startTcpProxy({
      host: "127.0.0.1",
      port: Number(new URL(sqs.env.SQS_ENDPOINT ?? "").port),
    });
    const bounded = createSqsSender({ timeoutMs: 1_500, allowPrivateNetworks: true });
    try {
      const dest = destination(queue, { endpointUrl: `http://127.0.0.1:${proxy.port}` });
      expect((await bounded.send(brokerRequest(dest, { endpointId: "ep_slow" }))).ok).toBe(true);
      await proxy.cut("silence");
      expect(await bounded.send(brokerRequest(dest, { endpointId: "ep_slow" }))).toMatchObject({
        ok: false,
        error: "timeout",
      });
      await proxy.restore();
      // Each kept-alive connection that went silent costs one more timeout; then a new one answers.
      const after: (string | null)[] = [];
      await until(async () => {
        after.push((await bounded.send(brokerRequest(dest, { endpointId: "ep_slow" }))).error);
        return after.at(-1) === null;
      }, "a send after the server answers again");
      expect(after.slice(0, -1).every((e) => e === "timeout")).toBe(true);
      expect(after.length).toBeLessThanOrEqual(3);
    } finally {
      await bounded.close();
      await proxy.close();
    }
  });

  it("refuses private addresses unless allowed, by the endpoint URL's literal address or what its name resolves to", async () => {
    const queue = await createQueue("guarded");
    const port = new URL(sqs.env.SQS_ENDPOINT ?? "").port;
    const guarded = createSqsSender({
      timeoutMs: 10_000,
      allowPrivateNetworks: false,
      lookup: names({ "sqs.internal.test": "127.0.0.1" }),
    });
    try {
      const endpoints = [
        sqs.env.SQS_ENDPOINT ?? "",
        `http://sqs.internal.test:${port}`,
        "http://nowhere.example.test/",
      ];
      const outcomes = [];
      for (const [i, endpointUrl] of endpoints.entries()) {
        outcomes.push(
          await guarded.send(brokerRequest(destination(queue, { endpointUrl }), { endpointId: `ep_g${i}` })),
        );
      }
      expect(outcomes.map((o) => o.error)).toEqual(["blocked_address", "blocked_address", "dns_error"]);
      expect(await receiveAll(queue, 0)).toEqual([]);
    } finally {
      await guarded.close();
    }
  });
});
