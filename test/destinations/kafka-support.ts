import { connect, createServer, type Server, type Socket } from "node:net";
import { join, resolve } from "node:path";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import { Kafka, logLevel } from "kafkajs";
import type { BrokerDeliveryRequest } from "../../src/app/ports/sending.ts";
import type { KafkaDestination } from "../../src/domain/destination.ts";
import { run } from "../support/broker-server.ts";

const ROOT = resolve(import.meta.dirname, "../..");
export const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8MVDX+wqmh8=";

/** An envelope's bytes as Herald serialises them (the fields a verifier checks), with `data`. */
export function envelope(id: string, data: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id,
    type: "message.sent",
    version: "2024-06-01",
    occurred_at: "2026-11-28T12:00:00.000Z",
    tenant_id: "ten_1",
    project_id: "prj_1",
    resource_id: "res_1",
    data,
  });
}

/** A delivery to `topic` on `brokers` with everything a test does not name filled in. */
export function kafkaRequest(
  brokers: string,
  topic: string,
  over: Partial<BrokerDeliveryRequest> = {},
  destination: Partial<KafkaDestination<string>> = {},
): BrokerDeliveryRequest {
  return {
    endpointId: "ep_kafka",
    version: 1,
    body: envelope("evt_1", { n: "é 😀" }),
    eventId: "evt_1",
    secrets: [SECRET],
    timestamp: Math.floor(Date.now() / 1000),
    scheme: "herald-v1",
    headers: [],
    messageKey: "res_1",
    deduplicationId: "evt_1",
    ...over,
    destination: {
      kind: "kafka",
      brokers: [brokers],
      topic,
      key: "resource",
      tls: false,
      sasl: null,
      ...destination,
    },
  };
}

/** A record as Kafka's own Java consumer read it (test/destinations/fixtures/KafkaConsume.java). */
export interface ConsumedRecord {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: [string, Buffer][];
}

/** Reads `count` records of `topic` from the start of every partition with Kafka's Java client. */
export async function consumeWithJava(
  jars: string,
  brokers: string,
  topic: string,
  count: number,
): Promise<ConsumedRecord[]> {
  const file = join(ROOT, "test/destinations/fixtures/KafkaConsume.java");
  const out = await run("java", ["-Xmx256m", "-cp", `${jars}/*`, file, brokers, topic, String(count)]);
  const b = (v: string | null) => (v === null ? null : Buffer.from(v, "base64"));
  return out
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => {
      const r = JSON.parse(line) as {
        partition: number;
        offset: number;
        key: string | null;
        value: string | null;
        headers: [string, string][];
      };
      return {
        ...r,
        key: b(r.key),
        value: b(r.value),
        headers: r.headers.map(([n, v]) => [n, Buffer.from(v, "base64")]),
      };
    });
}

/** A TCP relay to a broker that counts the connections it holds, optionally ending TLS (keeping the SNI). */
export interface Relay {
  port: number;
  /** Connections accepted since start. */
  readonly accepted: number;
  /** Connections open now. */
  readonly open: number;
  /** The server names TLS clients asked for, in order (TLS relays only). */
  readonly servernames: string[];
  close(): Promise<void>;
}

export async function startRelay(
  listenHost: string,
  target: { host: string; port: number },
  tls?: { cert: string; key: string },
): Promise<Relay> {
  let accepted = 0;
  const clients = new Set<Socket>();
  const servernames: string[] = [];
  const onConnection = (client: Socket) => {
    accepted++;
    clients.add(client);
    const sni = (client as TLSSocket).servername;
    if (tls) servernames.push(typeof sni === "string" ? sni : "");
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      s.on("error", () => {});
      s.on("close", () => {
        clients.delete(client);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const server: Server = tls ? createTlsServer(tls, onConnection) : createServer(onConnection);
  await new Promise<void>((res) => server.listen(0, listenHost, res));
  return {
    port: (server.address() as { port: number }).port,
    get accepted() {
      return accepted;
    },
    get open() {
      return clients.size;
    },
    servernames,
    close: () =>
      new Promise<void>((res) => {
        for (const c of clients) c.destroy();
        server.close(() => res());
      }),
  };
}

/** A server that accepts connections and never answers: a broker that hangs. */
export async function startSilentServer(): Promise<{
  port: number;
  open: () => number;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on("error", () => {});
    // Reads and drops what arrives, so a client's end is seen (a socket never read never sees EOF).
    s.resume();
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", res));
  return {
    port: (server.address() as { port: number }).port,
    open: () => sockets.size,
    close: () =>
      new Promise<void>((res) => {
        for (const s of sockets) s.destroy();
        server.close(() => res());
      }),
  };
}

/** kafkajs's ConfigResourceTypes.BROKER (not a named export Node's CommonJS loader finds). */
const BROKER_RESOURCE = 4;

function freePort(): Promise<number> {
  return new Promise((resolvePort) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolvePort(port));
    });
  });
}

/**
 * Adds a SASL_PLAINTEXT listener with PLAIN (one user) and SCRAM-SHA-256/512 (users made by
 * addScramUser) to the running broker (scripts/kafka.sh has none)
 * through the Admin API's per-broker dynamic configs, under a name of its own so a shared broker keeps
 * its other listeners; answers its port. Its advertised address cannot be added (advertised.listeners is
 * static in KRaft), so a client authenticates there and is then told there is no listener for it.
 */
export async function addSaslListener(brokers: string, user: string, password: string): Promise<number> {
  const name = `SASL_${Date.now() % 1_000_000}`;
  const port = await freePort();
  const admin = new Kafka({ clientId: "test", brokers: [brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const configNames = ["listeners", "listener.security.protocol.map"];
    const [current] = (
      await admin.describeConfigs({
        resources: [{ type: BROKER_RESOURCE, name: "1", configNames }],
        includeSynonyms: false,
      })
    ).resources;
    const value = (n: string) => current?.configEntries.find((e) => e.configName === n)?.configValue ?? "";
    const lower = name.toLowerCase();
    const configEntries = [
      {
        name: "listener.security.protocol.map",
        value: `${value("listener.security.protocol.map")},${name}:SASL_PLAINTEXT`,
      },
      { name: "listeners", value: `${value("listeners")},${name}://127.0.0.1:${port}` },
      { name: `listener.name.${lower}.sasl.enabled.mechanisms`, value: "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512" },
      ...["scram-sha-256", "scram-sha-512"].map((m) => ({
        name: `listener.name.${lower}.${m}.sasl.jaas.config`,
        value: "org.apache.kafka.common.security.scram.ScramLoginModule required;",
      })),
      {
        name: `listener.name.${lower}.plain.sasl.jaas.config`,
        value: `org.apache.kafka.common.security.plain.PlainLoginModule required user_${user}="${password}";`,
      },
    ];
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: BROKER_RESOURCE, name: "1", configEntries }],
    });
  } finally {
    await admin.disconnect();
  }
  return port;
}

/** Gives `user` SCRAM-SHA-256 and SCRAM-SHA-512 credentials, with Kafka's Java Admin client. */
export async function addScramUser(
  jars: string,
  brokers: string,
  user: string,
  password: string,
): Promise<void> {
  const file = join(ROOT, "test/destinations/fixtures/KafkaScramUser.java");
  await run("java", ["-Xmx256m", "-cp", `${jars}/*`, file, brokers, user, password]);
}
