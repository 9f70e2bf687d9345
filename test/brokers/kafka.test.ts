import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrokerServer } from "../support/broker-server.ts";
import { BROKERS_REQUIRED, javaProgram } from "../support/broker-server.ts";
import { kafkaJars, kafkaUnavailable, startKafka } from "../support/kafka-server.ts";

// The server issue 28's Kafka destinations will be tested on: scripts/kafka.sh's KRaft node, driven by
// Kafka's own Java client (an idempotent producer with acks=all, record headers, keys) and read back by
// its consumer, so a broken script or server fails here before any Herald code is involved. Always a
// broker of this file's own, even when the run has one: the script is what is tested, and it is killed.
const missing = kafkaUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs Kafka: ${missing}`);

interface Sent {
  sent: number;
  partition: number;
  offset: number;
}
interface Consumed {
  consumed: string;
  key: string;
  partition: number;
  offset: number;
  headers: Record<string, string>;
}

describe.skipIf(missing)(`Kafka by scripts/kafka.sh${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let kafka: BrokerServer;
  beforeAll(async () => {
    kafka = await startKafka(true);
  });
  afterAll(async () => {
    await kafka?.close();
  });

  it("stores what an idempotent acks=all producer sends, and gives back each key's records in order with their headers", async () => {
    const brokers = kafka.env.KAFKA_BROKERS ?? "";
    expect(brokers).toMatch(/^127\.0\.0\.1:\d+$/);
    const topic = `roundtrip-${Date.now()}`;
    const lines = await javaProgram("KafkaRoundTrip.java", await kafkaJars(), [brokers, topic, "6"]);
    const sent = lines.filter((l): l is Sent => typeof (l as Sent).sent === "number");
    const consumed = lines.filter((l): l is Consumed => typeof (l as Consumed).consumed === "string");

    // Every send was acknowledged with a place in the log, and the consumer read exactly those places.
    expect(sent.map((s) => s.sent)).toEqual([0, 1, 2, 3, 4, 5]);
    const place = (x: { partition: number; offset: number }) => `${x.partition}/${x.offset}`;
    expect(consumed.map(place).sort()).toEqual(sent.map(place).sort());

    for (const c of consumed) {
      const n = (JSON.parse(c.consumed) as { n: number }).n;
      expect(c.key).toBe(`order-${n % 2}`);
      expect(c.headers).toEqual({ "webhook-id": `msg_${n}`, "webhook-signature": "v1,c2lnbmF0dXJl" });
    }
    // One key, one partition: each key's records come back in the order they were sent.
    for (const key of ["order-0", "order-1"]) {
      const ofKey = consumed.filter((c) => c.key === key);
      expect(new Set(ofKey.map((c) => c.partition)).size).toBe(1);
      expect(ofKey.map((c) => (JSON.parse(c.consumed) as { n: number }).n)).toEqual(
        key === "order-0" ? [0, 2, 4] : [1, 3, 5],
      );
    }
  });

  it("still has what it acknowledged after it is killed and resumed on the same port and data", async () => {
    const brokers = kafka.env.KAFKA_BROKERS ?? "";
    const topic = `crash-${Date.now()}`;
    const jars = await kafkaJars();
    const before = await javaProgram("KafkaRoundTrip.java", jars, [brokers, topic, "4", "produce"]);
    const sent = before.filter((l): l is Sent => typeof (l as Sent).sent === "number");
    expect(sent).toHaveLength(4);

    await kafka.halt("kill");
    await kafka.resume();

    const after = await javaProgram("KafkaRoundTrip.java", jars, [brokers, topic, "4", "consume"]);
    const consumed = after.filter((l): l is Consumed => typeof (l as Consumed).consumed === "string");
    const place = (x: { partition: number; offset: number }) => `${x.partition}/${x.offset}`;
    expect(consumed.map(place).sort()).toEqual(sent.map(place).sort());
  });
});
