import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKafkaSender, type KafkaSenderOptions } from "../../src/adapters/destinations/kafka.ts";
import type { BrokerSender } from "../../src/app/ports/sending.ts";
import { BROKERS_REQUIRED, type BrokerServer } from "../support/broker-server.ts";
import { kafkaJars, kafkaUnavailable, startKafka } from "../support/kafka-server.ts";
import { until } from "../support/until.ts";
import { consumeWithJava, kafkaRequest, type Relay, startRelay, startSilentServer } from "./kafka-support.ts";

// The Kafka sender's producers over time, on a broker of this file's own (it is stopped, frozen and
// resumed): one per cluster, shared by its endpoints, closed when they should be (seen as the connections
// a relay in front of the bootstrap broker holds), one topic's failure kept from its cluster's other
// endpoints, a hung broker's producer discarded after the attempt timed out, and a broker that went away
// failing attempts until it is back, then the same sender delivering again.
const missing = kafkaUnavailable();

/** A process's state letter from /proc (R running, S sleeping, T stopped, ...). */
const processState = (pid: number): string =>
  readFileSync(`/proc/${pid}/stat`, "utf8").split(") ").pop()?.charAt(0) ?? "";
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs Kafka: ${missing}`);

describe.skipIf(missing)(`Kafka producers over time${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let kafka: BrokerServer;
  let port: number;
  let topic: string;
  /** The outage test's own topic: it reads back everything in it. */
  let outageTopic: string;
  const senders: BrokerSender[] = [];
  const relays: Relay[] = [];
  const sender = (o: Partial<KafkaSenderOptions> = {}) => {
    const s = createKafkaSender({ timeoutMs: 10_000, allowPrivateNetworks: true, ...o });
    senders.push(s);
    return s;
  };
  /** A bootstrap address of its own: its relay's open connections are the producer's to the bootstrap broker. */
  const relay = async () => {
    const r = await startRelay("127.0.0.1", { host: "127.0.0.1", port });
    relays.push(r);
    return r;
  };
  const via = (r: Relay, over: Parameters<typeof kafkaRequest>[2] = {}) =>
    kafkaRequest(`127.0.0.1:${r.port}`, topic, over);

  beforeAll(async () => {
    kafka = await startKafka(true);
    const brokers = kafka.env.KAFKA_BROKERS ?? "";
    port = Number(brokers.split(":")[1]);
    topic = `producers-${Date.now()}`;
    outageTopic = `outage-${Date.now()}`;
    const admin = new Kafka({ clientId: "test", brokers: [brokers], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.createTopics({
      topics: [
        { topic, numPartitions: 3 },
        { topic: outageTopic, numPartitions: 3 },
      ],
      waitForLeaders: true,
    });
    await admin.disconnect();
  });
  afterAll(async () => {
    await Promise.all(senders.map((s) => s.close()));
    await Promise.all(relays.map((r) => r.close()));
    await kafka?.close();
  });

  it("shares one producer among the endpoints of one cluster, and closes it when no endpoint names it", async () => {
    const s = sender();
    const [a, b, c, d] = [await relay(), await relay(), await relay(), await relay()];
    expect((await s.send(via(a, { endpointId: "ep_1" }))).ok).toBe(true);
    // Another endpoint of the same cluster sends through the same producer.
    expect((await s.send(via(a, { endpointId: "ep_2" }))).ok).toBe(true);
    expect([a.accepted, a.open]).toEqual([1, 1]);

    // A newer version of ep_1 names another cluster (here another bootstrap address); ep_2 still uses a's.
    expect((await s.send(via(b, { endpointId: "ep_1", version: 2 }))).ok).toBe(true);
    expect((await s.send(via(a, { endpointId: "ep_2" }))).ok).toBe(true);
    expect([a.accepted, a.open, b.accepted, b.open]).toEqual([1, 1, 1, 1]);
    // ep_2 moves too: no endpoint names a's producer any more.
    expect((await s.send(via(b, { endpointId: "ep_2", version: 2 }))).ok).toBe(true);
    await until(() => a.open === 0, "the producer no endpoint names closed");
    expect([b.accepted, b.open]).toEqual([1, 1]);
    // A request read before the change gets a producer of its own version, closed after its send.
    expect((await s.send(via(c, { endpointId: "ep_1", version: 1 }))).ok).toBe(true);
    await until(() => c.open === 0, "the older version's one-off producer closed");
    expect(b.open).toBe(1);

    await s.release("ep_1");
    expect((await s.send(via(b, { endpointId: "ep_2", version: 2 }))).ok).toBe(true);
    expect([b.accepted, b.open]).toEqual([1, 1]);
    await s.release("ep_2");
    await until(() => b.open === 0, "the released producer closed");
    expect((await s.send(via(d, { endpointId: "ep_other" }))).ok).toBe(true);
    expect(d.open).toBe(1);
    await s.close();
    await until(() => d.open === 0, "the closed sender's producer closed");
    expect((await s.send(via(d, { endpointId: "ep_other" }))).error).toBe("connection_error");
  });

  it("sends one cluster's endpoints in one request, and a topic that does not exist fails only its endpoint", async () => {
    const s = sender();
    const r = await relay();
    const missing = `missing-${Date.now()}`;
    // Sent in one turn: the three go in one request, which kafkajs fails whole for the unknown topic.
    const [one, lost, other] = await Promise.all([
      s.send(via(r, { endpointId: "ep_a", eventId: "evt_a" })),
      s.send(kafkaRequest(`127.0.0.1:${r.port}`, missing, { endpointId: "ep_b", eventId: "evt_b" })),
      s.send(via(r, { endpointId: "ep_c", eventId: "evt_c" })),
    ]);
    expect([one.ok, lost.ok, lost.error, other.ok]).toEqual([true, false, "destination_not_found", true]);
    expect(r.accepted).toBe(1);
  });

  it("closes a producer left idle", async () => {
    let now = Date.parse("2026-11-28T12:00:00Z");
    const s = sender({ idleMs: 2_000, clock: { now: () => new Date(now) } });
    const r = await relay();
    expect((await s.send(via(r))).ok).toBe(true);
    expect(r.open).toBe(1);
    now += 1_999;
    // Three sweeps (every idleMs / 4) see it used 1.999 s ago: it stays.
    await new Promise((res) => setTimeout(res, 1_600));
    expect(r.open).toBe(1);
    now += 1;
    await until(() => r.open === 0, "the idle producer closed");
  });

  it("times an attempt out on a broker that never answers", async () => {
    const silent = await startSilentServer();
    try {
      const out = await sender({ timeoutMs: 1_500 }).send(kafkaRequest(`127.0.0.1:${silent.port}`, topic));
      expect([out.ok, out.error]).toEqual([false, "timeout"]);
      await until(() => silent.open() === 0, "the timed-out producer's connection closed");
    } finally {
      await silent.close();
    }
  });

  it("discards a producer whose send timed out on a frozen broker, and delivers with a new one after", async () => {
    const s = sender({ timeoutMs: 3_000 });
    const r = await relay();
    expect((await s.send(via(r))).ok).toBe(true);
    expect(r.accepted).toBe(1);
    // SIGSTOP to the broker this file started: connections stay open and nothing answers.
    const pid = Number(readFileSync(join(kafka.state ?? "", "pid"), "utf8"));
    process.kill(-pid, "SIGSTOP");
    let frozen: Awaited<ReturnType<BrokerSender["send"]>>;
    let stateAfter = "";
    try {
      // Sent only once the broker is seen stopped (its state in /proc), so that nothing it does can answer.
      await until(() => processState(pid) === "T", `the broker (pid ${pid}) stopped`);
      frozen = await s.send(via(r));
      stateAfter = processState(pid);
    } finally {
      process.kill(-pid, "SIGCONT");
    }
    expect([frozen.ok, frozen.error], `the broker's state after the send: ${stateAfter}`).toEqual([
      false,
      "timeout",
    ]);
    await until(async () => (await s.send(via(r))).ok, "a delivery after the broker thawed");
    expect(r.accepted).toBeGreaterThan(1);
  });

  it("fails attempts while the broker is down, then delivers with the same sender once it is back", async () => {
    const s = sender({ timeoutMs: 5_000 });
    const brokers = kafka.env.KAFKA_BROKERS ?? "";
    const first = await s.send(kafkaRequest(brokers, outageTopic, { eventId: "evt_before" }));
    expect(first.ok).toBe(true);
    await kafka.halt("kill");
    const down = [];
    for (let i = 0; i < 2; i++) down.push(await s.send(kafkaRequest(brokers, outageTopic)));
    for (const o of down) {
      expect(o.ok).toBe(false);
      expect(["connection_error", "timeout"]).toContain(o.error);
    }
    await kafka.resume();
    const errors: (string | null)[] = [];
    const after = kafkaRequest(brokers, outageTopic, {
      eventId: "evt_after",
      body: '{"after":"resume"}',
    });
    let receipt: Record<string, string | number> | null | undefined = null;
    await until(async () => {
      const o = await s.send(after);
      if (!o.ok) errors.push(o.error);
      receipt = o.receipt;
      return o.ok;
    }, "a delivery after the broker came back");
    for (const e of errors) expect(["connection_error", "timeout"]).toContain(e);
    // One key, one partition: the records before the receipt's offset are the first delivery and any
    // timed-out attempt the broker stored after all (at least once), then the acknowledged one.
    const { offset } = receipt as unknown as { offset: string };
    const records = await consumeWithJava(await kafkaJars(), brokers, outageTopic, Number(offset) + 1);
    const place = (x: { partition: number; offset: number }) => ({
      partition: x.partition,
      offset: String(x.offset),
    });
    const stored = records.filter((x) => x.value?.toString("utf8") === '{"after":"resume"}').map(place);
    expect(stored).toContainEqual(receipt);
    expect(records.filter((x) => x.value?.toString("utf8") !== '{"after":"resume"}')).toHaveLength(1);
  });
});
