import { fileURLToPath } from "node:url";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../clients/typescript/verify.ts";
import type { SendOutcome } from "../../src/domain/delivery.ts";
import { bin, fixtureRuntimes, root, run, runs } from "../adapters/delivery/fixture-runtimes.ts";
import { BROKERS_REQUIRED, type BrokerServer } from "../support/broker-server.ts";
import { kafkaJars, kafkaUnavailable, startKafka } from "../support/kafka-server.ts";
import { consumeWithJava, envelope, kafkaRequest, SECRET } from "./kafka-support.ts";

// The Kafka sender on Bun and Deno (ADR 27: kafkajs on every runtime, one path), in child processes
// against the real broker: a delivery through a name its resolver maps (read back by Kafka's Java consumer
// and verified) signed as Herald's wiring signs there, an unknown topic, a refused loopback address, TLS against a plaintext listener.
const missing = kafkaUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs Kafka: ${missing}`);
const fixture = fileURLToPath(new URL("./fixtures/kafka-send.ts", import.meta.url));

describe.skipIf(missing)(`the Kafka sender on Bun and Deno${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let kafka: BrokerServer;
  let brokers: string;
  let topic: string;
  beforeAll(async () => {
    kafka = await startKafka();
    brokers = kafka.env.KAFKA_BROKERS ?? "";
    topic = `runtimes-${Date.now()}`;
    const admin = new Kafka({ clientId: "test", brokers: [brokers], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
    await admin.disconnect();
  });
  afterAll(async () => {
    await kafka?.close();
  });

  it.each(fixtureRuntimes(fixture))("delivers and names failures on $name", async (runtime) => {
    expect(runs(runtime.name), `${runtime.name} from runtimes/bun-deno (npm run test:all installs it)`).toBe(
      true,
    );
    const port = brokers.split(":")[1];
    const named = `kafka.example.test:${port}`;
    const dns = { "kafka.example.test": "127.0.0.1" };
    const eventId = `evt_${runtime.name}`;
    const body = envelope(eventId, { runtime: runtime.name, n: "é 😀" });
    const cases = [
      { request: kafkaRequest(named, topic, { eventId, body }), allowPrivateNetworks: true, dns },
      { request: kafkaRequest(named, `missing-${Date.now()}`), allowPrivateNetworks: true, dns },
      { request: kafkaRequest(named, topic), allowPrivateNetworks: false, dns },
      { request: kafkaRequest(brokers, topic, {}, { tls: true }), allowPrivateNetworks: true, dns },
    ];
    const { stdout } = await run(bin(runtime.name), [...runtime.args, JSON.stringify(cases)], {
      cwd: root,
      timeout: 120_000,
    });
    const lines = stdout.trim().split("\n");
    // Web Crypto's signers there, as the fetch sender's: node:crypto's are Node's alone.
    expect(JSON.parse(lines.at(-2) ?? "null")).toEqual([]);
    const out = JSON.parse(lines.at(-1) ?? "[]") as SendOutcome[];
    expect(out.map((o) => [o.ok, o.error])).toEqual([
      [true, null],
      [false, "destination_not_found"],
      [false, "blocked_address"],
      [false, "tls_error"],
    ]);
    const receipt = out[0]?.receipt as { partition: number; offset: string };
    const records = await consumeWithJava(await kafkaJars(), brokers, topic, Number(receipt.offset) + 1);
    const record = records.find(
      (r) => r.partition === receipt.partition && String(r.offset) === receipt.offset,
    );
    expect(record?.value?.equals(Buffer.from(body, "utf8"))).toBe(true);
    const headers = Object.fromEntries(
      (record?.headers ?? []).map(([n, v]) => [n.toLowerCase(), v.toString("utf8")]),
    );
    expect((await verifyWebhook({ body: record?.value ?? "", headers, secrets: SECRET })).id).toBe(eventId);
  });
});
