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
import { type StringAttributes, sqsCall, sqsUnavailable, startSqs } from "../support/sqs-server.ts";
import { brokerRequest, sqsDestination, verifies } from "./helpers.ts";

// The RabbitMQ and SQS senders on Bun and Deno (ADR 27: one library path on every runtime; SQS through
// fetch after the address check there): one send of each, read back and verified from Node.
const missing = rabbitmqUnavailable() ?? sqsUnavailable();
if (missing && BROKERS_REQUIRED)
  throw new Error(`CI needs RabbitMQ and an SQS-compatible server: ${missing}`);

const root = fileURLToPath(new URL("../../", import.meta.url));
const fixture = fileURLToPath(new URL("./fixtures/broker-send.ts", import.meta.url));
const RUNTIMES = [
  { name: "bun" as const, args: [fixture] },
  { name: "deno" as const, args: ["run", "--allow-all", "--node-modules-dir=manual", "--no-lock", fixture] },
];

describe.skipIf(missing)(
  `the broker senders on Bun and Deno${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    let rabbit: BrokerServer;
    let sqs: BrokerServer;
    let admin: ChannelModel;
    let ch: Channel;
    let queueUrl: string;
    const amqpQueue = `runtimes-${Date.now().toString(36)}`;

    beforeAll(async () => {
      [rabbit, sqs] = await Promise.all([startRabbitmq(), startSqs()]);
      admin = await connect(rabbit.env.RABBITMQ_URL ?? "");
      ch = await admin.createChannel();
      await ch.assertQueue(amqpQueue, { durable: true });
      queueUrl = String((await sqsCall(sqs.env, "CreateQueue", { QueueName: amqpQueue })).QueueUrl);
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
      const { stdout } = await promisify(execFile)(
        runtimeBin(runtime.name),
        [...runtime.args, JSON.stringify(requests)],
        {
          cwd: root,
          timeout: 120_000,
        },
      );
      const outcomes = JSON.parse(stdout.trim().split("\n").at(-1) ?? "[]") as SendOutcome[];
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
  },
);
