import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../clients/typescript/verify.ts";
import { createKafkaSender } from "../../src/adapters/destinations/kafka.ts";
import type { BrokerSender } from "../../src/app/ports/sending.ts";
import { SASL_MECHANISMS, type SaslMechanism } from "../../src/domain/destination.ts";
import { ed25519PublicKey, newEd25519Secret } from "../../src/domain/standard-webhooks-ed25519.ts";
import { BROKERS_REQUIRED, type BrokerServer } from "../support/broker-server.ts";
import { kafkaJars, kafkaUnavailable, startKafka } from "../support/kafka-server.ts";
import { testTls } from "../support/tls.ts";
import { until } from "../support/until.ts";
import { names } from "./helpers.ts";
import {
  addSaslListener,
  addScramUser,
  consumeWithJava,
  envelope,
  kafkaRequest,
  SECRET,
  startRelay,
} from "./kafka-support.ts";

// The Kafka sender against a real broker (scripts/kafka.sh), its records read back by Kafka's own Java
// consumer and verified with Herald's published verifier (clients/typescript/verify.ts): the body byte for
// byte, the key, the signature headers in order. Then what it answers when the topic, the record's size,
// the address, the password or TLS is wrong. The outage, the pool and the timeout are kafka-outage.test.ts's.
const missing = kafkaUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs Kafka: ${missing}`);

const PASSWORD = "right-password-7Qx";
const WRONG = "wrong-password-x9";
const ED_KEY = newEd25519Secret(crypto.getRandomValues(new Uint8Array(32)));
let resolver = names({});

describe.skipIf(missing)(
  `the Kafka sender on a real broker${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    let kafka: BrokerServer;
    let brokers: string;
    let port: number;
    const senders: BrokerSender[] = [];
    const sender = (o: Partial<Parameters<typeof createKafkaSender>[0]> = {}) => {
      const s = createKafkaSender({ timeoutMs: 10_000, allowPrivateNetworks: true, ...o });
      senders.push(s);
      return s;
    };
    const admin = () =>
      new Kafka({ clientId: "test", brokers: [brokers], logLevel: logLevel.NOTHING }).admin();

    beforeAll(async () => {
      kafka = await startKafka();
      brokers = kafka.env.KAFKA_BROKERS ?? "";
      port = Number(brokers.split(":")[1]);
    });
    afterAll(async () => {
      await Promise.all(senders.map((s) => s.close()));
      await kafka?.close();
    });

    it("stores the envelope byte for byte with the record key and the scheme's headers, verifiable by a consumer", async () => {
      const topic = `deliveries-${Date.now()}`;
      const a = admin();
      await a.connect();
      await a.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
      await a.disconnect();
      const s = sender();
      const sent = [
        kafkaRequest(brokers, topic, {
          traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
          headers: [["X-Tenant", "acme é"]],
        }),
        kafkaRequest(brokers, topic, {
          eventId: "evt_2",
          body: envelope("evt_2", { line: "a\nb" }),
          scheme: "standard-webhooks",
          messageKey: "res_2",
        }),
        kafkaRequest(brokers, topic, {
          eventId: "evt_3",
          body: envelope("evt_3"),
          scheme: "standard-webhooks-ed25519",
          secrets: [ED_KEY],
          messageKey: "ep_kafka",
        }),
      ];
      const outcomes = [];
      for (const req of sent) outcomes.push(await s.send(req));
      expect(outcomes.map((o) => [o.ok, o.error, o.responseStatus])).toEqual([
        [true, null, null],
        [true, null, null],
        [true, null, null],
      ]);
      for (const o of outcomes)
        expect(o.receipt).toEqual({ partition: expect.any(Number), offset: expect.stringMatching(/^\d+$/) });

      const records = await consumeWithJava(await kafkaJars(), brokers, topic, 3);
      expect(records).toHaveLength(3);
      for (const [i, req] of sent.entries()) {
        const receipt = outcomes[i]?.receipt as { partition: number; offset: string };
        const record = records.find(
          (r) => r.partition === receipt.partition && String(r.offset) === receipt.offset,
        );
        expect(record, `record at ${receipt.partition}/${receipt.offset}`).toBeDefined();
        if (!record) continue;
        expect(record.value?.equals(Buffer.from(req.body, "utf8"))).toBe(true);
        expect(record.key?.toString("utf8")).toBe(req.messageKey);
        const headers = record.headers.map(([n, v]) => [n, v.toString("utf8")] as const);
        const herald = req.scheme === "herald-v1";
        expect(headers.map(([n]) => n)).toEqual(
          herald
            ? ["X-Webhook-Id", "X-Webhook-Timestamp", "X-Webhook-Signature", "traceparent", "X-Tenant"]
            : ["webhook-id", "webhook-timestamp", "webhook-signature"],
        );
        expect(headers[0]?.[1]).toBe(req.eventId);
        if (herald)
          expect(headers.slice(3)).toEqual([
            ["traceparent", req.traceparent],
            ["X-Tenant", "acme é"],
          ]);
        const envelope = await verifyWebhook({
          body: record.value ?? new Uint8Array(),
          headers: Object.fromEntries(headers.map(([n, v]) => [n.toLowerCase(), v])),
          scheme: req.scheme,
          ...(req.scheme === "standard-webhooks-ed25519"
            ? { publicKeys: await ed25519PublicKey(ED_KEY) }
            : { secrets: SECRET }),
        });
        expect(envelope.id).toBe(req.eventId);
      }
    });

    it("answers destination_not_found for a topic that does not exist, and does not create it", async () => {
      const topic = `missing-${Date.now()}`;
      const out = await sender().send(kafkaRequest(brokers, topic));
      expect([out.ok, out.error, out.receipt ?? null]).toEqual([false, "destination_not_found", null]);
      const a = admin();
      await a.connect();
      expect(await a.listTopics()).not.toContain(topic);
      await a.disconnect();
    });

    it("answers message_too_large for a record over the topic's limit", async () => {
      const topic = `small-${Date.now()}`;
      const a = admin();
      await a.connect();
      await a.createTopics({
        topics: [{ topic, numPartitions: 1, configEntries: [{ name: "max.message.bytes", value: "2048" }] }],
        waitForLeaders: true,
      });
      await a.disconnect();
      const s = sender();
      const big = await s.send(
        kafkaRequest(brokers, topic, { body: envelope("evt_big", { pad: "x".repeat(4096) }) }),
      );
      expect([big.ok, big.error]).toEqual([false, "message_too_large"]);
      // The same producer goes on: a small one fits.
      expect((await s.send(kafkaRequest(brokers, topic))).ok).toBe(true);
    });

    it("refuses loopback brokers unless private networks are allowed, and connects to the address it checked", async () => {
      const topic = `guarded-${Date.now()}`;
      resolver = names({ "kafka.example.test": "127.0.0.1" });
      const guarded = sender({ allowPrivateNetworks: false, resolve: resolver });
      const byIp = await guarded.send(kafkaRequest(brokers, topic));
      const byName = await guarded.send(
        kafkaRequest(`kafka.example.test:${port}`, topic, { endpointId: "ep_2" }),
      );
      expect([byIp.error, byName.error]).toEqual(["blocked_address", "blocked_address"]);
      expect(resolver.asked).toContain("kafka.example.test");

      // Allowed, the name is resolved by the sender's resolver (the system's knows no such name).
      const open = sender({ allowPrivateNetworks: true, resolve: resolver });
      const ok = await open.send(kafkaRequest(`kafka.example.test:${port}`, topic, { endpointId: "ep_3" }));
      expect([ok.ok, ok.error]).toEqual([false, "destination_not_found"]);
    });

    it("checks every broker the cluster advertises, not only the bootstrap one", async () => {
      // The bootstrap name leads to 127.0.0.2 (a relay to the broker), counted public by this policy; the
      // cluster then advertises 127.0.0.1, which the policy refuses: the produce never leaves.
      const relay = await startRelay("127.0.0.2", { host: "127.0.0.1", port });
      try {
        resolver = names({ "bootstrap.example.test": "127.0.0.2" });
        const s = sender({
          allowPrivateNetworks: false,
          resolve: resolver,
          isBlocked: (ip) => ip === "127.0.0.1",
        });
        const out = await s.send(
          kafkaRequest(`bootstrap.example.test:${relay.port}`, `advertised-${Date.now()}`),
        );
        expect(out.error).toBe("blocked_address");
        expect(relay.accepted).toBeGreaterThan(0);
      } finally {
        await relay.close();
      }
    });

    it("reaches a bootstrap broker given as an IPv6 address in brackets, and guards it as any other", async () => {
      const topic = `ipv6-${Date.now()}`;
      const a = admin();
      await a.connect();
      await a.createTopics({ topics: [{ topic }], waitForLeaders: true });
      await a.disconnect();
      const relay = await startRelay("::1", { host: "127.0.0.1", port });
      try {
        const out = await sender().send(kafkaRequest(`[::1]:${relay.port}`, topic, { endpointId: "ep_v6" }));
        expect([out.ok, out.error]).toEqual([true, null]);
        expect(relay.accepted).toBeGreaterThan(0);
        const guarded = sender({ allowPrivateNetworks: false });
        expect((await guarded.send(kafkaRequest(`[::1]:${relay.port}`, topic))).error).toBe(
          "blocked_address",
        );
      } finally {
        await relay.close();
      }
    });

    it("answers auth_error for a SASL password the broker refuses, on each mechanism, and never logs it", async () => {
      // scripts/kafka.sh has no SASL listener: one is added to the running broker (kafka-support.ts).
      const saslPort = await addSaslListener(brokers, "herald", PASSWORD);
      await addScramUser(await kafkaJars(), brokers, "herald", PASSWORD);
      const lines: string[] = [];
      const logger = {
        debug: (msg: string, fields?: Record<string, unknown>) =>
          lines.push(JSON.stringify({ msg, ...fields })),
        info() {},
        warn() {},
        error() {},
        child: () => logger,
      };
      const s = sender({ logger });
      const to = (mechanism: SaslMechanism, password: string) =>
        kafkaRequest(
          `127.0.0.1:${saslPort}`,
          `sasl-${Date.now()}`,
          { endpointId: `ep_${mechanism}_${password === PASSWORD ? "right" : "wrong"}` },
          { sasl: { mechanism, username: "herald", password } },
        );
      // The listener opens moments after the change is accepted.
      await until(async () => (await s.send(to("plain", WRONG))).error === "auth_error", "auth_error");
      for (const mechanism of SASL_MECHANISMS) {
        expect([mechanism, (await s.send(to(mechanism, WRONG))).error]).toEqual([mechanism, "auth_error"]);
        // The right password is taken: the broker answers metadata, then names no leader on this listener
        // (LISTENER_NOT_FOUND: a listener added at run time cannot be advertised, advertised.listeners is
        // static in KRaft), a cluster that cannot take the record now, as a broker that went away cannot.
        expect([mechanism, (await s.send(to(mechanism, PASSWORD))).error]).toEqual([
          mechanism,
          "connection_error",
        ]);
      }
      const logged = lines.join("\n");
      expect(logged).toContain("Invalid username or password");
      expect(logged).toContain("SCRAM-SHA-512");
      expect(logged).toContain("no listener");
      for (const secret of [WRONG, PASSWORD]) expect(logged).not.toContain(secret);
    });

    it("names TLS failures tls_error and sends the host name as TLS server name", async () => {
      const tls = await testTls();
      // A TLS relay in front of the plaintext broker: the bootstrap handshake with the test CA succeeds
      // (SNI "localhost"); the broker then advertises its plaintext listener, where TLS cannot work.
      const relay = await startRelay(
        "127.0.0.1",
        { host: "127.0.0.1", port },
        { cert: tls.cert, key: tls.key },
      );
      try {
        resolver = names({ localhost: "127.0.0.1" });
        const s = sender({ resolve: resolver });
        const topic = `tls-${Date.now()}`;
        const withCa = await s.send(
          kafkaRequest(`localhost:${relay.port}`, topic, {}, { tls: { ca: tls.caCert } }),
        );
        expect(withCa.error).toBe("tls_error");
        expect(relay.servernames[0]).toBe("localhost");
        const untrusted = await s.send(
          kafkaRequest(`localhost:${relay.port}`, topic, { endpointId: "ep_untrusted" }, { tls: true }),
        );
        const plaintext = await s.send(
          kafkaRequest(brokers, topic, { endpointId: "ep_plain" }, { tls: true }),
        );
        expect([untrusted.error, plaintext.error]).toEqual(["tls_error", "tls_error"]);
        // Only the handshake with the CA trusted completed (each retry of it too).
        expect(relay.servernames.every((n) => n === "localhost")).toBe(true);
      } finally {
        await relay.close();
      }
    });
  },
);
