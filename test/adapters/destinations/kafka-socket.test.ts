import { once } from "node:events";
import { createServer, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isBlockedAddress } from "../../../src/adapters/delivery/address-policy.ts";
import type { Resolve } from "../../../src/adapters/delivery/guarded-lookup.ts";
import { guardedSocketFactory, TLS_HANDSHAKE_CODE } from "../../../src/adapters/destinations/kafka-socket.ts";

// kafkajs's socket factory with the address guard, without a broker: what it connects to, what it refuses,
// and how a TLS handshake cut short is named. Its use by kafkajs is test/destinations/kafka-sender.test.ts's.
let server: ReturnType<typeof createServer>;
let port: number;
const peers: string[] = [];

beforeAll(async () => {
  server = createServer((s) => {
    peers.push(s.localAddress ?? "");
    // Answers a TLS ClientHello by hanging up, as a plaintext Kafka listener does.
    s.once("data", () => s.destroy());
    s.on("error", () => {});
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const table =
  (map: Record<string, string>): Resolve =>
  async (host) => {
    const address = map[host];
    if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return [{ address, family: 4 }];
  };

/** Opens a socket as kafkajs would; answers "connected" or the error's code. */
function open(factory: ReturnType<typeof guardedSocketFactory>, host: string, ssl = false): Promise<string> {
  return new Promise((resolve) => {
    let socket: Socket;
    const done = (what: string) => {
      socket.destroy();
      resolve(what);
    };
    socket = factory({
      host,
      port,
      ssl: ssl ? { rejectUnauthorized: true } : (undefined as never),
      onConnect: () => done("connected"),
    });
    socket.on("error", (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
  });
}

describe("guardedSocketFactory", () => {
  const allowAll = { resolve: table({ "kafka.example.test": "127.0.0.1" }), isBlocked: () => false };
  const guarded = { resolve: table({ "kafka.example.test": "127.0.0.1" }), isBlocked: isBlockedAddress };

  it("connects to the address the name resolved to, through the given resolver", async () => {
    expect(await open(guardedSocketFactory(allowAll), "kafka.example.test")).toBe("connected");
    expect(await open(guardedSocketFactory(allowAll), "127.0.0.1")).toBe("connected");
  });

  it("refuses a loopback name or address before connecting, and an unknown name is a DNS failure", async () => {
    const before = peers.length;
    expect(await open(guardedSocketFactory(guarded), "kafka.example.test")).toBe("EBLOCKEDADDRESS");
    expect(await open(guardedSocketFactory(guarded), "127.0.0.1")).toBe("EBLOCKEDADDRESS");
    expect(await open(guardedSocketFactory(guarded), "nowhere.example.test")).toBe("ENOTFOUND");
    expect(peers.length).toBe(before);
  });

  it("names a TLS handshake the server hung up on, and leaves a refused connection a connection failure", async () => {
    expect(await open(guardedSocketFactory(allowAll), "kafka.example.test", true)).toBe(TLS_HANDSHAKE_CODE);
    const closed = createServer();
    closed.listen(0, "127.0.0.1");
    await once(closed, "listening");
    const free = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const refused = await new Promise<string>((resolve) => {
      const s = guardedSocketFactory(allowAll)({
        host: "127.0.0.1",
        port: free,
        ssl: {},
        onConnect: () => resolve("connected"),
      });
      s.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? ""));
    });
    expect(refused).toBe("ECONNREFUSED");
  });
});
