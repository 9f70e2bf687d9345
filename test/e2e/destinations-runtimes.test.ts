import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookWithSecret } from "../../clients/typescript/client.ts";
import { type AmqpTail, startAmqpTail } from "../support/amqp-tail.ts";
import type { BrokerServer } from "../support/broker-server.ts";
import type { Consumed } from "../support/consumed.ts";
import {
  brokerTitle,
  destinationSystem,
  expectNothingLost,
  OUTAGE_ENV,
} from "../support/destination-system.ts";
import { eventOf, verifyConsumed } from "../support/destinations-e2e.ts";
import { type Runtime, testRuntimes } from "../support/herald-process.ts";
import { kafkaJars, kafkaUnavailable, startKafka } from "../support/kafka-server.ts";
import { type KafkaTail, startKafkaTail } from "../support/kafka-tail.ts";
import { rabbitmqUnavailable, startRabbitmqTls } from "../support/rabbitmq-server.ts";
import { sqsUnavailable, startSqs } from "../support/sqs-server.ts";
import { type SqsTail, sqsAction, startSqsTail } from "../support/sqs-tail.ts";
import { testTls } from "../support/tls.ts";
import { allDeliveries, waitUntil } from "./delivery-support.ts";

// Issue 28 on Bun and Deno (the README: the same code on Node, Bun and Deno; ADR 27: one client path per
// broker on every runtime): a whole Herald process of each runtime, with a Kafka, an amqps RabbitMQ (the
// CA trusted the runtime's own way, as for HTTPS: Bun NODE_EXTRA_CA_CERTS, Deno DENO_CERT) and an SQS
// endpoint made through its API, delivers events that independent consumers read and verify, each with
// one succeeded attempt and its receipt. Node's runs are the other destinations-*.test.ts files.
const missing = kafkaUnavailable() ?? rabbitmqUnavailable() ?? sqsUnavailable();
const title = brokerTitle("Kafka, RabbitMQ and an SQS server", missing);

const RUNTIMES = testRuntimes().filter((r): r is Exclude<Runtime, "node"> => r !== "node");
/**
 * The runtime's own way to trust `ca` (`untrusted` given where the runtime does not read it: on Deno,
 * NODE_EXTRA_CA_CERTS names the untrusted CA, so it is DENO_CERT that makes the difference).
 */
const TRUST: Record<(typeof RUNTIMES)[number], (ca: string, untrusted: string) => Record<string, string>> = {
  bun: (ca) => ({ NODE_EXTRA_CA_CERTS: ca }),
  deno: (ca, untrusted) => ({ NODE_EXTRA_CA_CERTS: untrusted, DENO_CERT: ca }),
};
const EVENTS = 2;

describe.skipIf(missing || RUNTIMES.length === 0)(
  `broker destinations on Bun and Deno, whole system${title}`,
  () => {
    let kafka: BrokerServer;
    let rabbit: BrokerServer;
    let sqs: BrokerServer;
    let kafkaTail: KafkaTail;
    const tails: { close(): Promise<void> }[] = [];
    const stamp = Date.now().toString(36);
    const topic = (r: string) => `e2e-rt-${r}-${stamp}`;

    beforeAll(async () => {
      const tls = await testTls();
      [kafka, rabbit, sqs] = await Promise.all([startKafka(), startRabbitmqTls(tls), startSqs()]);
      kafkaTail = await startKafkaTail(await kafkaJars(), kafka.env.KAFKA_BROKERS ?? "", RUNTIMES.map(topic));
    });

    afterAll(async () => {
      await Promise.all(tails.map((t) => t.close()));
      await kafkaTail?.close();
      await Promise.all([kafka?.close(), rabbit?.close(), sqs?.close()]);
    });

    it.each(RUNTIMES)("delivers to Kafka, RabbitMQ over amqps and SQS from Herald on %s", async (runtime) => {
      const [tls, other] = await Promise.all([testTls(), testTls("other")]);
      // First a process that trusts another CA than the node's: its amqps attempts must fail as tls_error.
      const system = await destinationSystem(
        `e2e_dest_rt_${runtime}`,
        [randomUUID()],
        {
          HERALD_ALLOW_HTTP_URLS: "true",
          ...OUTAGE_ENV,
          ...TRUST[runtime](other.caCertPath, other.caCertPath),
        },
        runtime,
      );
      try {
        const names = { exchange: `e2e-rt-x-${runtime}-${stamp}`, queue: `e2e-rt-q-${runtime}-${stamp}` };
        const amqp: AmqpTail = await startAmqpTail(
          rabbit.env.RABBITMQ_URL ?? "",
          names.exchange,
          names.queue,
          "o",
        );
        tails.push(amqp);
        const server = sqs.env.SQS_ENDPOINT ?? "";
        const queueUrl = String(
          (await sqsAction(server, "CreateQueue", { QueueName: `e2e-rt-${runtime}-${stamp}` })).QueueUrl,
        );
        const sqsTail: SqsTail = startSqsTail(server, queueUrl);
        tails.push(sqsTail);
        const endpoints: [WebhookWithSecret, () => Consumed[]][] = [
          [
            await system.create({
              kind: "kafka",
              kafka: { brokers: [kafka.env.KAFKA_BROKERS ?? ""], topic: topic(runtime), tls: false },
            }),
            () => kafkaTail.records.filter((r) => r.destination === topic(runtime)),
          ],
          [
            await system.create({
              kind: "rabbitmq",
              rabbitmq: {
                url: rabbit.env.RABBITMQ_TLS_URL ?? "",
                exchange: names.exchange,
                routing_key: "o",
              },
              signature_scheme: "standard-webhooks",
            }),
            () => amqp.records,
          ],
          [
            await system.create({
              kind: "sqs",
              sqs: {
                queue_url: queueUrl,
                region: sqs.env.SQS_REGION ?? "us-east-1",
                access_key_id: sqs.env.AWS_ACCESS_KEY_ID ?? "",
                secret_access_key: sqs.env.AWS_SECRET_ACCESS_KEY ?? "",
                endpoint_url: server,
              },
              signature_scheme: "standard-webhooks-ed25519",
            }),
            () => sqsTail.records,
          ],
        ];
        await system.publish(EVENTS);
        const rabbitmq = endpoints[1]![0];
        await waitUntil(
          async () => (await allDeliveries(system.client, rabbitmq.id, "failed")).length >= 1,
          () => `a failed amqps attempt with the node's CA untrusted (${runtime})`,
        );
        await system.herald.stop(15_000);
        // Then one that trusts it the runtime's way: what failed is delivered.
        const trusting = await system.world.start(TRUST[runtime](tls.caCertPath, other.caCertPath), {
          runtime,
        });
        const client = system.world.client(trusting.baseUrl);
        for (const [endpoint, records] of endpoints) {
          const read = () => new Set(records().map(eventOf));
          await waitUntil(
            () => read().size === EVENTS,
            () => `${read().size} of ${EVENTS} read from ${endpoint.url} (${runtime})`,
          );
          expect([...read()].sort()).toEqual(system.ids());
          for (const r of records()) await verifyConsumed(r, endpoint);
          // The consumer may read a message before Herald has recorded its attempt.
          const succeededOnes = () => allDeliveries(client, endpoint.id, "succeeded");
          await waitUntil(
            async () => (await succeededOnes()).length === EVENTS,
            () => `${EVENTS} succeeded attempts recorded for ${endpoint.url} (${runtime})`,
          );
          const succeeded = await succeededOnes();
          expect(succeeded.map((d) => d.event_id).sort()).toEqual(system.ids());
          // Kafka's and SQS's receipts name where the consumer read the message (AMQP's delivery tag is the channel's).
          if (endpoint.kind !== "rabbitmq")
            for (const d of succeeded) expect(records().map((r) => r.place)).toContainEqual(d.receipt);
        }
        expectNothingLost(await allDeliveries(client, rabbitmq.id), system.ids(), ["tls_error"]);
      } finally {
        await system.close();
      }
    });
  },
);
