// Where `npm run bench -- --destination KIND` sends its 8 endpoints' deliveries and how it sees them
// arrive: the HTTP receiver (https), or a broker and a consumer that timestamps each message as it reads
// it (kafka: a kafkajs consumer; rabbitmq: an amqplib consumer; sqs: long-polling ReceiveMessage loops).
// A broker is the one the environment names (KAFKA_BROKERS; RABBITMQ_URL; SQS_ENDPOINT with SQS_REGION,
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), or one started here by scripts/<kind>.sh and stopped after.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import amqp from "amqplib";
import { Kafka, logLevel } from "kafkajs";
import { signV4 } from "../src/adapters/destinations/sigv4.ts";
import { cpuSeconds, type Receipt, Receiver } from "./processes.ts";

export const DESTINATIONS = ["https", "kafka", "rabbitmq", "sqs"] as const;
export type Destination = (typeof DESTINATIONS)[number];

/** What a run sends to and reads back from, as bench/store-run.ts uses the HTTP receiver. */
export interface Sink {
  /** The POST /api/v1/webhooks body of endpoint `e` (its events are `type`). */
  endpoint(e: number, type: string): Record<string, unknown>;
  count(): Promise<{ count: number; distinct: number }>;
  take(): Promise<Receipt[]>;
  /** CPU seconds the broker's processes have used (0 for https, or a broker this run did not start). */
  brokerCpu(): number;
  close(): Promise<void>;
}

const ROOT = resolve(import.meta.dirname, "..");

/** Receipts gathered in this process, counted by distinct (event, endpoint) pair as the receiver does. */
class Collected {
  receipts: Receipt[] = [];
  pairs = new Set<string>();
  add(id: string, path: string) {
    this.receipts.push({ id, path, at: Date.now() });
    this.pairs.add(`${id} ${path}`);
  }
  async count() {
    return { count: this.receipts.length, distinct: this.pairs.size };
  }
  async take() {
    const out = this.receipts;
    this.receipts = [];
    this.pairs = new Set();
    return out;
  }
}

/** A broker of the environment's, or one scripts/<kind>.sh starts in a state directory of its own. */
function broker(kind: Exclude<Destination, "https">, names: string[]) {
  if (process.env[names[0]!]) return { env: process.env as Record<string, string>, cpu: () => 0, stop() {} };
  const script = join(ROOT, "scripts", `${kind}.sh`);
  const state = mkdtempSync(join(tmpdir(), `herald-bench-${kind}-`));
  console.log(`starting ${kind} with scripts/${kind}.sh (${names[0]} is not set)`);
  // The broker is a daemon of its own session: stopped however this process ends (an error, Ctrl-C).
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    process.off("exit", stop);
    execFileSync(script, ["stop", state], { stdio: "inherit" });
    rmSync(state, { recursive: true, force: true });
  };
  process.on("exit", stop);
  process.once("SIGINT", () => process.exit(130));
  const out = execFileSync(script, ["start", state], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const env: Record<string, string> = {};
  for (const [, n, v] of out.matchAll(/^export (\w+)=(.*)$/gm)) env[n!] = v!;
  const session = Number(readFileSync(join(state, "pid"), "utf8"));
  // Every process of the broker's session (the script starts it with setsid): the JVM, or Erlang's.
  return { env, cpu: () => sessionCpu(session), stop };
}

function sessionCpu(session: number): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]) === session)
        total += cpuSeconds(Number(entry));
    } catch {}
  }
  return total;
}

export async function startSink(kind: Destination, endpoints: number): Promise<Sink> {
  const run = Date.now().toString(36);
  const names = Array.from({ length: endpoints }, (_, e) => `bench-${run}-ep${e}`);
  if (kind === "https") {
    const rx = await Receiver.start();
    return Object.assign(rx, {
      endpoint: (e: number, type: string) => ({ url: `http://127.0.0.1:${rx.port}/ep${e}`, events: [type] }),
      brokerCpu: () => 0,
    });
  }
  const got = new Collected();
  const pathOf = (name: string) => `ep${names.indexOf(name)}`;
  if (kind === "kafka") {
    const b = broker("kafka", ["KAFKA_BROKERS"]);
    const brokers = b.env.KAFKA_BROKERS!.split(",");
    const kafka = new Kafka({ clientId: "bench", brokers, logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: names.map((topic) => ({ topic, numPartitions: 3 })),
      waitForLeaders: true,
    });
    await admin.disconnect();
    const consumer = kafka.consumer({ groupId: `bench-${run}`, maxWaitTimeInMs: 100 });
    await consumer.connect();
    const joined = new Promise((r) => consumer.on(consumer.events.GROUP_JOIN, r));
    await consumer.subscribe({ topics: names, fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) got.add(String(m.headers?.["X-Webhook-Id"]), pathOf(batch.topic));
      },
    });
    await joined;
    return Object.assign(got, {
      endpoint: (e: number, type: string) => ({
        kind: "kafka",
        kafka: { brokers, topic: names[e], tls: false },
        events: [type],
      }),
      brokerCpu: b.cpu,
      close: async () => {
        await consumer.disconnect();
        b.stop();
      },
    });
  }
  if (kind === "rabbitmq") {
    const b = broker("rabbitmq", ["RABBITMQ_URL"]);
    const connection = await amqp.connect(b.env.RABBITMQ_URL!);
    const channel = await connection.createChannel();
    for (const queue of names) {
      await channel.assertQueue(queue, { durable: true });
      await channel.consume(queue, (m) => m && got.add(String(m.properties.messageId), pathOf(queue)), {
        noAck: true,
      });
    }
    return Object.assign(got, {
      endpoint: (e: number, type: string) => ({
        kind: "rabbitmq",
        rabbitmq: { url: b.env.RABBITMQ_URL!, exchange: "", routing_key: names[e] },
        events: [type],
      }),
      brokerCpu: b.cpu,
      close: async () => {
        await connection.close();
        b.stop();
      },
    });
  }
  const b = broker("sqs", ["SQS_ENDPOINT", "SQS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]);
  const call = async (action: string, input: object) => {
    const url = `${b.env.SQS_ENDPOINT}/`;
    const body = JSON.stringify(input);
    const headers = signV4({
      method: "POST",
      url,
      headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": `AmazonSQS.${action}` },
      body,
      region: b.env.SQS_REGION ?? "us-east-1",
      service: "sqs",
      accessKeyId: b.env.AWS_ACCESS_KEY_ID ?? "",
      secretAccessKey: b.env.AWS_SECRET_ACCESS_KEY ?? "",
    });
    const r = await fetch(url, { method: "POST", headers, body });
    if (r.status !== 200) throw new Error(`SQS ${action}: ${r.status} ${await r.text()}`);
    return (await r.json()) as Record<string, unknown>;
  };
  const queues = await Promise.all(
    names.map(async (QueueName) => String((await call("CreateQueue", { QueueName })).QueueUrl)),
  );
  let open = true;
  const loops = queues.map(async (QueueUrl, e) => {
    while (open) {
      const { Messages = [] } = (await call("ReceiveMessage", {
        QueueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        MessageAttributeNames: ["X-Webhook-Id"],
      })) as {
        Messages?: { MessageAttributes: Record<string, { StringValue: string }>; ReceiptHandle: string }[];
      };
      for (const m of Messages) got.add(m.MessageAttributes["X-Webhook-Id"]!.StringValue, `ep${e}`);
      if (Messages.length > 0)
        await call("DeleteMessageBatch", {
          QueueUrl,
          Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        });
    }
  });
  return Object.assign(got, {
    endpoint: (e: number, type: string) => ({
      kind: "sqs",
      sqs: {
        queue_url: queues[e],
        region: b.env.SQS_REGION ?? "us-east-1",
        // ElasticMQ checks no signature; scripts/sqs.sh's dummy key id has a dash, which Herald refuses.
        access_key_id: /^[A-Za-z0-9]{1,128}$/.test(b.env.AWS_ACCESS_KEY_ID ?? "")
          ? b.env.AWS_ACCESS_KEY_ID
          : "AKIAHERALDBENCH",
        secret_access_key: b.env.AWS_SECRET_ACCESS_KEY,
        endpoint_url: b.env.SQS_ENDPOINT,
      },
      events: [type],
    }),
    brokerCpu: b.cpu,
    close: async () => {
      open = false;
      await Promise.all(loops);
      b.stop();
    },
  });
}
