import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrokerServer } from "../support/broker-server.ts";
import { BROKERS_REQUIRED } from "../support/broker-server.ts";
import { signV4 } from "../support/sigv4.ts";
import {
  md5OfStringAttributes,
  SqsError,
  type StringAttributes,
  sqsCall,
  sqsReceiveAll,
  sqsUnavailable,
  startSqs,
} from "../support/sqs-server.ts";

// The server issue 28's SQS destinations will be tested on: scripts/sqs.sh's ElasticMQ, spoken to over
// SQS's JSON protocol with a SigV4 of the test's own: message attributes and the MD5s a sender checks,
// FIFO groups and deduplication ids, and the limits Herald must respect. Always a server of this file's
// own, even when the run has one: the script is what is tested, and it is killed.
const missing = sqsUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs an SQS-compatible server: ${missing}`);

const md5 = (s: string) => createHash("md5").update(s, "utf8").digest("hex");

interface Message {
  MessageId: string;
  ReceiptHandle: string;
  Body: string;
  MD5OfBody: string;
  MessageAttributes?: StringAttributes;
  Attributes?: Record<string, string>;
}

describe("SigV4 of test/support/sigv4.ts", () => {
  it("signs AWS's published example (IAM ListUsers, 2015-08-30) to its published signature", () => {
    const headers = signV4({
      method: "GET",
      url: "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08",
      headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8" },
      body: "",
      region: "us-east-1",
      service: "iam",
      accessKeyId: "AKIDEXAMPLE",
      secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
      amzDate: "20150830T123600Z",
    });
    expect(headers.authorization).toBe(
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
    );
  });
});

describe.skipIf(missing)(`SQS by scripts/sqs.sh${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let sqs: BrokerServer;
  const call = (action: string, input: object) => sqsCall(sqs.env, action, input);
  const receiveAll = (queue: string, want: number) => sqsReceiveAll<Message>(sqs.env, queue, want);
  beforeAll(async () => {
    sqs = await startSqs(true);
  });
  afterAll(async () => {
    await sqs?.close();
  });

  it("answers SendMessage with the body's and the attributes' MD5s, and gives both back unchanged", async () => {
    expect(sqs.env.SQS_ENDPOINT).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const queue = String((await call("CreateQueue", { QueueName: `standard-${Date.now()}` })).QueueUrl);
    const body = '{"type":"order.paid","data":{"name":"Zoë ✓"}}';
    const attributes: StringAttributes = {
      "webhook-id": { DataType: "String", StringValue: "msg_2hTu" },
      "webhook-timestamp": { DataType: "String", StringValue: "1700000000" },
      "webhook-signature": {
        DataType: "String",
        StringValue: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
      },
    };
    const sent = await call("SendMessage", {
      QueueUrl: queue,
      MessageBody: body,
      MessageAttributes: attributes,
    });
    expect(sent.MD5OfMessageBody).toBe(md5(body));
    expect(sent.MD5OfMessageAttributes).toBe(md5OfStringAttributes(attributes));
    expect(sent.MessageId).toMatch(/\S/);

    const [got, ...more] = await receiveAll(queue, 1);
    expect(more).toEqual([]);
    expect(got?.MessageId).toBe(sent.MessageId);
    expect(got?.Body).toBe(body);
    expect(got?.MessageAttributes).toEqual(attributes);
  });

  it("keeps a FIFO group's order and drops a repeated deduplication id, answering it with the first message's id", async () => {
    const queue = String(
      (
        await call("CreateQueue", {
          QueueName: `ordered-${Date.now()}.fifo`,
          Attributes: { FifoQueue: "true" },
        })
      ).QueueUrl,
    );
    const send = (group: string, dedup: string, body: string) =>
      call("SendMessage", {
        QueueUrl: queue,
        MessageBody: body,
        MessageGroupId: group,
        MessageDeduplicationId: dedup,
      });
    const first = await send("order-1", "evt_1", "1a");
    const again = await send("order-1", "evt_1", "1a");
    await send("order-2", "evt_2", "2a");
    await send("order-1", "evt_3", "1b");
    await send("order-1", "evt_4", "1c");
    expect(again.MessageId).toBe(first.MessageId);

    const got = await receiveAll(queue, 4);
    const ofGroup = (g: string) => got.filter((m) => m.Attributes?.MessageGroupId === g).map((m) => m.Body);
    expect(got).toHaveLength(4);
    expect(ofGroup("order-1")).toEqual(["1a", "1b", "1c"]);
    expect(ofGroup("order-2")).toEqual(["2a"]);
    expect(got.find((m) => m.Body === "1a")?.Attributes?.MessageDeduplicationId).toBe("evt_1");

    // A FIFO queue refuses a message without a group: Herald must send one (the ordering key, or a default).
    const refused = await send("", "evt_5", "x").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SqsError);
  });

  it("refuses more than 10 message attributes and an empty attribute value", async () => {
    const queue = String((await call("CreateQueue", { QueueName: `limits-${Date.now()}` })).QueueUrl);
    const eleven: StringAttributes = {};
    for (let i = 0; i < 11; i++) eleven[`a${i}`] = { DataType: "String", StringValue: "x" };
    const tooMany = await call("SendMessage", {
      QueueUrl: queue,
      MessageBody: "x",
      MessageAttributes: eleven,
    }).catch((e: unknown) => e);
    expect(tooMany).toBeInstanceOf(SqsError);
    expect((tooMany as SqsError).status).toBe(400);

    const ten = Object.fromEntries(Object.entries(eleven).slice(0, 10));
    const sent = await call("SendMessage", { QueueUrl: queue, MessageBody: "x", MessageAttributes: ten });
    expect(sent.MD5OfMessageAttributes).toBe(md5OfStringAttributes(ten));

    const empty = await call("SendMessage", {
      QueueUrl: queue,
      MessageBody: "x",
      MessageAttributes: { a: { DataType: "String", StringValue: "" } },
    }).catch((e: unknown) => e);
    expect((empty as SqsError).type).toBe("InvalidAttributeValue");
  });

  it("still holds a sent message and its queue after the server is killed and resumed", async () => {
    const name = `crash-${Date.now()}.fifo`;
    const queue = String(
      (await call("CreateQueue", { QueueName: name, Attributes: { FifoQueue: "true" } })).QueueUrl,
    );
    const sent = await call("SendMessage", {
      QueueUrl: queue,
      MessageBody: "kept",
      MessageGroupId: "g",
      MessageDeduplicationId: "evt_1",
    });

    await sqs.halt("kill");
    await sqs.resume();

    expect((await call("GetQueueUrl", { QueueName: name })).QueueUrl).toBe(queue);
    const got = await receiveAll(queue, 1);
    expect(got.map((m) => [m.MessageId, m.Body])).toEqual([[sent.MessageId, "kept"]]);
  });
});
