import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Channel, type ChannelModel, connect } from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrokerDeliveryRequest } from "../../src/app/ports/sending.ts";
import type { SendOutcome } from "../../src/domain/delivery.ts";
import { BROKERS_REQUIRED, type BrokerServer } from "../support/broker-server.ts";
import { rabbitmqUnavailable, startRabbitmq } from "../support/rabbitmq-server.ts";
import { runtimeBin } from "../support/runtimes.ts";
import {
  type StringAttributes,
  sqsCall,
  sqsReceiveAll,
  sqsUnavailable,
  startSqs,
} from "../support/sqs-server.ts";
import { brokerRequest, sqsDestination, verifies } from "./helpers.ts";

// The RabbitMQ and SQS senders on Bun and Deno (ADR 27: one library path on every runtime; SQS through
// fetch after the address check there): one send of each, read back and verified from Node; and SQS's
// batches there: deliveries started together go in fewer requests, a refused one failing alone.
const missing = rabbitmqUnavailable() ?? sqsUnavailable();
if (missing && BROKERS_REQUIRED)
  throw new Error(`CI needs RabbitMQ and an SQS-compatible server: ${missing}`);

const root = fileURLToPath(new URL("../../", import.meta.url));
const fixture = fileURLToPath(new URL("./fixtures/broker-send.ts", import.meta.url));
const RUNTIMES = [
  { name: "bun" as const, args: [fixture] },
  { name: "deno" as const, args: ["run", "--allow-all", "--node-modules-dir=manual", "--no-lock", fixture] },
];

/** The fixture's answer: each request's outcome, and each SQS request it made. */
interface Sent {
  outcomes: SendOutcome[];
  sqsRequests: { action: string; messages: number }[];
}

async function sendOn(
  runtime: (typeof RUNTIMES)[number],
  requests: BrokerDeliveryRequest[],
  mode: "apart" | "together",
): Promise<Sent> {
  const { stdout } = await promisify(execFile)(
    runtimeBin(runtime.name),
    [...runtime.args, JSON.stringify(requests), mode],
    { cwd: root, timeout: 120_000 },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Sent;
}

describe.skipIf(missing)(
  `the broker senders on Bun and Deno${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    let rabbit: BrokerServer;
    let sqs: BrokerServer;
    let admin: ChannelModel;
    let ch: Channel;
    let queueUrl: string;
    let batchQueueUrl: string;
    const amqpQueue = `runtimes-${Date.now().toString(36)}`;

    beforeAll(async () => {
      [rabbit, sqs] = await Promise.all([startRabbitmq(), startSqs()]);
      admin = await connect(rabbit.env.RABBITMQ_URL ?? "");
      ch = await admin.createChannel();
      await ch.assertQueue(amqpQueue, { durable: true });
      queueUrl = String((await sqsCall(sqs.env, "CreateQueue", { QueueName: amqpQueue })).QueueUrl);
      batchQueueUrl = String(
        (await sqsCall(sqs.env, "CreateQueue", { QueueName: `${amqpQueue}-batch` })).QueueUrl,
      );
    });
    afterAll(async () => {
      await admin?.close().catch(() => {});
      await Promise.all([rabbit?.close(), sqs?.close()]);
    });

    it.each(RUNTIMES)("sends to RabbitMQ and SQS on $name", async (runtime) => {
      const host = new URL(rabbit.env.RABBITMQ_URL ?? "").host;
      const requests: BrokerDeliveryRequest[] = [
        brokerRequest(
          {
            kind: "rabbitmq",
            url: `amqp://guest@${host}/%2f`,
            password: "guest",
            exchange: "",
            routingKey: amqpQueue,
          },
          { scheme: "standard-webhooks" },
        ),
        brokerRequest(sqsDestination(sqs.env, queueUrl)),
        brokerRequest(
          {
            kind: "rabbitmq",
            url: `amqp://guest@${host}/%2f`,
            password: "guest",
            exchange: "",
            routingKey: "nobody",
          },
          { endpointId: "ep_unroutable" },
        ),
      ];
      const { outcomes } = await sendOn(runtime, requests, "apart");
      expect(outcomes.map((o) => o.error)).toEqual([null, null, "unroutable"]);
      expect(outcomes[0]?.receipt).toEqual({ delivery_tag: 1 });

      const [amqp, sqsReq] = requests as [BrokerDeliveryRequest, BrokerDeliveryRequest];
      const m = await ch.get(amqpQueue, { noAck: true });
      expect(m ? m.content.toString() : null).toBe(amqp.body);
      const amqpHeaders = Object.fromEntries(
        Object.entries(m ? (m.properties.headers ?? {}) : {}).map(([k, v]) => [k, String(v)]),
      );
      expect(await verifies(amqp.scheme, amqp.body, amqpHeaders)).toBe(true);

      const answer = await sqsCall(sqs.env, "ReceiveMessage", {
        QueueUrl: queueUrl,
        WaitTimeSeconds: 5,
        MessageAttributeNames: ["All"],
      });
      const [got] = (answer.Messages ?? []) as {
        MessageId: string;
        Body: string;
        ReceiptHandle: string;
        MessageAttributes: StringAttributes;
      }[];
      expect(got?.MessageId).toBe(outcomes[1]?.receipt?.message_id);
      expect(got?.Body).toBe(sqsReq.body);
      const sqsHeaders = Object.fromEntries(
        Object.entries(got?.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue]),
      );
      expect(await verifies(sqsReq.scheme, sqsReq.body, sqsHeaders)).toBe(true);
      if (got)
        await sqsCall(sqs.env, "DeleteMessage", { QueueUrl: queueUrl, ReceiptHandle: got.ReceiptHandle });
    });

    it.each(RUNTIMES)(
      "sends SQS deliveries started together in fewer requests on $name, a refused one failing alone",
      async (runtime) => {
        const dest = sqsDestination(sqs.env, batchQueueUrl);
        const requests = Array.from({ length: 8 }, (_, i) =>
          brokerRequest(dest, { scheme: i % 2 === 0 ? "herald-v1" : "standard-webhooks" }),
        );
        // SQS refuses a body with a character outside XML's (InvalidMessageContents).
        const refused = brokerRequest(dest, { body: '{"bad":"\u0000"}' });
        requests.splice(4, 0, refused);
        const { outcomes, sqsRequests } = await sendOn(runtime, requests, "together");
        expect(outcomes.map((o) => o.error)).toEqual(
          requests.map((r) => (r === refused ? "broker_rejected" : null)),
        );
        const sends = sqsRequests.filter((r) => r.action.startsWith("SendMessage"));
        expect(sends.reduce((n, r) => n + r.messages, 0)).toBe(requests.length);
        expect(sends.length).toBeLessThan(requests.length);

        const stored = requests.filter((r) => r !== refused);
        const got = await sqsReceiveAll<{
          MessageId: string;
          Body: string;
          ReceiptHandle: string;
          MessageAttributes: StringAttributes;
        }>(sqs.env, batchQueueUrl, stored.length);
        expect(got).toHaveLength(stored.length);
        for (const req of stored) {
          const m = got.find((g) => g.MessageId === outcomes[requests.indexOf(req)]?.receipt?.message_id);
          expect(m?.Body, `the message of ${req.eventId}`).toBe(req.body);
          const headers = Object.fromEntries(
            Object.entries(m?.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue]),
          );
          expect(await verifies(req.scheme, req.body, headers)).toBe(true);
        }
      },
    );
  },
);
