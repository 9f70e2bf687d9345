import { createServer } from "node:net";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createFetchSender } from "../../../src/adapters/delivery/fetch-sender.ts";
import type { Resolve } from "../../../src/adapters/delivery/guarded-lookup.ts";
import type { ProxyRoute } from "../../../src/adapters/delivery/proxy-tunnel.ts";
import { createUndiciSender } from "../../../src/adapters/delivery/undici-sender.ts";
import type { Sender } from "../../../src/app/ports/sending.ts";
import { parseEgressProxy, parseNoProxy } from "../../../src/domain/egress-proxy.ts";
import { type ConnectProxy, startConnectProxy } from "../../support/connect-proxy.ts";
import { behaviours, type Receiver, startReceiver } from "../../support/receiver.ts";
import { type TestClientTls, type TestTls, testClientTls, testTls } from "../../support/tls.ts";
import { closedPort, delivery, SECRET, scriptedLookup } from "./helpers.ts";

// Both senders' proxied paths on Node, through a real CONNECT proxy on loopback: the Node sender
// (undici with a tunnelling connector) and the fetch sender's node:net path that Bun and Deno run
// (proxy-runtimes.test.ts runs that one on Bun and Deno themselves).

let tls: TestTls;
let clients: TestClientTls;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  [tls, clients] = await Promise.all([testTls(), testClientTls()]);
});

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

async function proxy(options: Parameters<typeof startConnectProxy>[0] = {}): Promise<ConnectProxy> {
  const p = await startConnectProxy(options);
  cleanups.push(() => p.close());
  return p;
}

async function receiver(secure = true): Promise<Receiver> {
  const r = await startReceiver({ secrets: [SECRET], ...(secure ? { tls } : {}) });
  cleanups.push(() => r.close());
  return r;
}

function route(url: string, noProxy = ""): ProxyRoute {
  return { proxy: parseEgressProxy(url), noProxy: parseNoProxy(noProxy) };
}

interface Make {
  proxy: ProxyRoute;
  lookup: Resolve;
  allowPrivateNetworks?: boolean;
  timeoutMs?: number;
}

const SENDERS = [
  {
    name: "the Node sender (undici)",
    make: (o: Make) =>
      createUndiciSender({
        timeoutMs: o.timeoutMs ?? 3_000,
        allowPrivateNetworks: o.allowPrivateNetworks ?? true,
        userAgent: "Herald/test",
        ca: tls.caCert,
        lookup: o.lookup,
        proxy: o.proxy,
      }),
  },
  {
    name: "the fetch sender (node:net path, as on Bun and Deno)",
    make: (o: Make) =>
      createFetchSender({
        timeoutMs: o.timeoutMs ?? 3_000,
        allowPrivateNetworks: o.allowPrivateNetworks ?? true,
        userAgent: "Herald/test",
        ca: tls.caCert,
        lookup: o.lookup,
        proxy: o.proxy,
      }),
  },
];

describe.each(SENDERS)("deliveries through an egress proxy: $name", ({ make }) => {
  function sender(o: Make): Sender {
    const s = make(o);
    cleanups.push(() => s.close());
    return s;
  }

  it("asks the proxy for the checked address, and TLS and Host name the endpoint's host", async () => {
    const rx = await receiver();
    const px = await proxy({ credentials: "herald:pa ss@w0rd" });
    const lookup = scriptedLookup(["127.0.0.1"]);
    const s = sender({ proxy: route(`http://herald:pa%20ss%40w0rd@127.0.0.1:${px.port}`), lookup });

    const outcome = await s.send(delivery(`https://localhost:${rx.port}/webhook?x=1`));
    expect(outcome).toMatchObject({ ok: true, responseStatus: 200, responseBody: "ok", error: null });
    expect(lookup.calls).toEqual(["localhost"]);
    expect(px.requests.map((r) => [r.method, r.target, r.headers.host, r.status])).toEqual([
      ["CONNECT", `127.0.0.1:${rx.port}`, `127.0.0.1:${rx.port}`, 200],
    ]);
    expect(px.requests[0]?.headers["proxy-authorization"]).toBe(
      `Basic ${Buffer.from("herald:pa ss@w0rd").toString("base64")}`,
    );
    const [got] = await rx.waitFor(1);
    expect(got?.verdict.ok).toBe(true);
    expect(got?.path).toBe("/webhook?x=1");
    expect(got?.headers.host).toBe(`localhost:${rx.port}`);
    expect(got?.sni).toBe("localhost");
    expect(got?.headers["proxy-authorization"]).toBeUndefined();
    // The TLS session really ran through the tunnel.
    expect(px.tunnelledBytes).toBeGreaterThan(Buffer.byteLength(delivery("x").body));
  });

  it("presents an endpoint's client certificate inside the tunnel (mutual TLS through the proxy)", async () => {
    const rx = await startReceiver({ secrets: [SECRET], tls: { ...tls, clientCa: clients.caCert } });
    cleanups.push(() => rx.close());
    const px = await proxy();
    const s = sender({ proxy: route(px.url), lookup: scriptedLookup(["127.0.0.1"]) });
    const url = `https://localhost:${rx.port}/webhook`;
    const alice = { id: "endpoint-a:sealed", certificate: clients.alice.cert, key: clients.alice.key };
    const bob = { id: "endpoint-b:sealed", certificate: clients.bob.cert, key: clients.bob.key };
    const outcomes = [];
    for (const who of [alice, bob, alice])
      outcomes.push(await s.send(delivery(url, { clientCertificate: who })));
    expect(outcomes.map((o) => [o.error, o.responseStatus])).toEqual([
      [null, 200],
      [null, 200],
      [null, 200],
    ]);
    const got = await rx.waitFor(3);
    expect(got.map((r) => r.clientCertificate)).toEqual(["alice", "bob", "alice"]);
    // Every tunnel was asked for the checked address, never the name.
    expect(new Set(px.requests.map((r) => r.target))).toEqual(new Set([`127.0.0.1:${rx.port}`]));
    // Without one, the receiver's refusal is a TLS error, through the proxy as directly.
    const none = await s.send(delivery(url));
    expect(none).toMatchObject({ ok: false, error: "tls_error" });
    expect(rx.requests).toHaveLength(3);
  });

  it("verifies the certificate against the endpoint's host name, not the address tunnelled to", async () => {
    const rx = await receiver();
    const px = await proxy();
    // The certificate is valid for localhost and 127.0.0.1; a name resolving to 127.0.0.1 must still fail.
    const s = sender({ proxy: route(px.url), lookup: scriptedLookup(["127.0.0.1"]) });
    const outcome = await s.send(delivery(`https://wrong-name.test:${rx.port}/webhook`));
    expect(outcome).toMatchObject({ ok: false, error: "tls_error", responseStatus: null });
    expect(px.requests.map((r) => r.target)).toEqual([`127.0.0.1:${rx.port}`]);
    expect(rx.requests).toHaveLength(0);
  });

  it("refuses a name that resolves to a private address before anything reaches the proxy", async () => {
    const px = await proxy();
    const lookup = scriptedLookup(["203.0.113.7", "10.1.2.3"]);
    const s = sender({ proxy: route(px.url), lookup, allowPrivateNetworks: false });
    const outcome = await s.send(delivery("https://internal.example.test/webhook"));
    expect(outcome).toMatchObject({ ok: false, error: "blocked_address", responseStatus: null });
    expect(lookup.calls).toEqual(["internal.example.test"]);
    const literal = await s.send(delivery("https://127.0.0.1:8443/webhook"));
    expect(literal.error).toBe("blocked_address");
    expect(px.connections).toBe(0);
  });

  it("answers CONNECT refusals (407, 403, 502) as connection errors and a 504 as a timeout", async () => {
    const rx = await receiver();
    const px = await proxy({ credentials: "herald:right" });
    const lookup = scriptedLookup(["127.0.0.1"]);
    const url = `https://localhost:${rx.port}/webhook`;
    const wrong = await sender({ proxy: route(`http://herald:wrong@127.0.0.1:${px.port}`), lookup }).send(
      delivery(url),
    );
    expect(wrong).toMatchObject({ ok: false, error: "connection_error", responseStatus: null });
    const right = sender({ proxy: route(`http://herald:right@127.0.0.1:${px.port}`), lookup });
    const outcomes = [];
    for (const status of [403, 502, 504]) {
      px.setAnswer(status);
      outcomes.push(await right.send(delivery(url)));
    }
    expect(outcomes.map((o) => [o.error, o.responseStatus])).toEqual([
      ["connection_error", null],
      ["connection_error", null],
      ["timeout", null],
    ]);
    expect(px.requests.map((r) => r.status)).toEqual([407, 403, 502, 504]);
    expect(rx.requests).toHaveLength(0);
  });

  it("times out on a proxy that never answers CONNECT, and fails fast on one that is down", async () => {
    const px = await proxy({ answer: "hang" });
    const lookup = scriptedLookup(["127.0.0.1"]);
    const hung = await sender({ proxy: route(px.url), lookup, timeoutMs: 500 }).send(
      delivery("https://localhost:9/webhook"),
    );
    expect(hung).toMatchObject({ ok: false, error: "timeout" });
    // Ended by the sender's own limit, not by anything the proxy did.
    expect(hung.durationMs).toBeLessThan(10_000);
    expect(px.requests).toHaveLength(1);

    const down = await sender({ proxy: route(`http://127.0.0.1:${await closedPort()}`), lookup }).send(
      delivery("https://localhost:9/webhook"),
    );
    expect(down).toMatchObject({ ok: false, error: "connection_error" });
  });

  it("tunnels plain-http endpoints with CONNECT too, Host header unchanged", async () => {
    const rx = await receiver(false);
    rx.setBehaviour(behaviours.retryAfter(429, "120"));
    const px = await proxy();
    const s = sender({ proxy: route(px.url), lookup: scriptedLookup(["127.0.0.1"]) });
    const outcome = await s.send(delivery(`http://localhost:${rx.port}/plain`));
    expect(outcome).toMatchObject({
      ok: false,
      error: "http_status",
      responseStatus: 429,
      retryAfterMs: 120_000,
    });
    expect(outcome.responseBody).toBe("slow down");
    expect(px.requests.map((r) => r.target)).toEqual([`127.0.0.1:${rx.port}`]);
    const [got] = await rx.waitFor(1);
    expect(got?.headers.host).toBe(`localhost:${rx.port}`);
    expect(got?.verdict.ok).toBe(true);
  });

  it("keeps the first 4 KiB of a long answer and reports redirects, through the tunnel", async () => {
    const rx = await receiver();
    const big = "0123456789abcdef".repeat(65_536);
    rx.setBehaviour((req) => (req.path === "/big" ? behaviours.status(500, big) : behaviours.redirect("/x")));
    const px = await proxy();
    const s = sender({ proxy: route(px.url), lookup: scriptedLookup(["127.0.0.1"]) });
    const long = await s.send(delivery(`https://localhost:${rx.port}/big`));
    expect(long).toMatchObject({ error: "http_status", responseStatus: 500 });
    expect(long.responseBody).toBe(big.slice(0, 4096));
    const moved = await s.send(delivery(`https://localhost:${rx.port}/moved`));
    expect(moved).toMatchObject({ error: "redirect", responseStatus: 302 });
  });

  it("goes direct for hosts HERALD_DELIVERY_NO_PROXY names, with the usual address check", async () => {
    // Plain http: the fetch sender's direct path is the runtime's fetch, which has no `ca` option.
    const rx = await receiver(false);
    const px = await proxy();
    const s = sender({
      proxy: route(px.url, "example.test, localhost"),
      lookup: scriptedLookup(["127.0.0.1"]),
    });
    const outcome = await s.send(delivery(`http://localhost:${rx.port}/webhook`));
    expect(outcome).toMatchObject({ ok: true, responseStatus: 200 });
    expect(px.connections).toBe(0);
    const blocked = sender({
      proxy: route(px.url, "localhost"),
      lookup: scriptedLookup(["127.0.0.1"]),
      allowPrivateNetworks: false,
    });
    expect((await blocked.send(delivery(`http://localhost:${rx.port}/webhook`))).error).toBe(
      "blocked_address",
    );
    expect(px.connections).toBe(0);
  });
});

describe("the tunnel's address", () => {
  it("checks every new tunnel again: a name rebound to a blocked address never reaches the proxy", async () => {
    const rx = await receiver(false);
    const px = await proxy();
    // 127.0.0.1 is the stand-in public address here, 10.x the private one the name is rebound to.
    const s = createFetchSender({
      timeoutMs: 3_000,
      allowPrivateNetworks: false,
      isBlocked: (ip) => ip.startsWith("10."),
      userAgent: "Herald/test",
      lookup: scriptedLookup(["127.0.0.1"], ["10.0.0.7"]),
      proxy: route(px.url),
    });
    cleanups.push(() => s.close());
    const url = `http://rebound.example.test:${rx.port}/webhook`;
    expect((await s.send(delivery(url))).responseStatus).toBe(200);
    expect((await s.send(delivery(url))).error).toBe("blocked_address");
    expect(px.requests.map((r) => r.target)).toEqual([`127.0.0.1:${rx.port}`]);
  });

  it.each(SENDERS)(
    "asks for the next checked address when the proxy cannot reach one: $name",
    async ({ make }) => {
      const rx = await receiver();
      const px = await proxy();
      // The receiver listens on 127.0.0.1 only: the proxy answers 502 for [::1].
      const s = make({ proxy: route(px.url), lookup: scriptedLookup(["::1", "127.0.0.1"]) });
      cleanups.push(() => s.close());
      const outcome = await s.send(delivery(`https://localhost:${rx.port}/webhook`));
      expect(outcome).toMatchObject({ ok: true, responseStatus: 200 });
      expect(px.requests.map((r) => [r.target, r.status])).toEqual([
        [`[::1]:${rx.port}`, 502],
        [`127.0.0.1:${rx.port}`, 200],
      ]);
    },
  );

  it("writes an IPv6 address in brackets", async () => {
    const px = await proxy({ answer: 502 });
    const s = createUndiciSender({
      timeoutMs: 3_000,
      allowPrivateNetworks: true,
      userAgent: "Herald/test",
      lookup: scriptedLookup(["2001:db8::5"]),
      proxy: route(px.url),
    });
    cleanups.push(() => s.close());
    expect((await s.send(delivery("https://v6.example.test/webhook"))).error).toBe("connection_error");
    expect(px.requests.map((r) => [r.target, r.headers.host])).toEqual([
      ["[2001:db8::5]:443", "[2001:db8::5]:443"],
    ]);
  });
});

describe("the POST on a tunnel (proxy-post.ts, the Bun and Deno path)", () => {
  /** A raw HTTP/1.1 server answering each request with `answer` as written, byte for byte. */
  async function rawReceiver(answer: string[]): Promise<{ port: number; heads: string[] }> {
    const heads: string[] = [];
    const server = createServer((socket) => {
      let got = "";
      socket.on("error", () => {});
      socket.on("data", (d: Buffer) => {
        got += d.toString("latin1");
        const end = got.indexOf("\r\n\r\n");
        const length = Number(/content-length: (\d+)/i.exec(got)?.[1] ?? 0);
        if (end === -1 || got.length < end + 4 + length) return;
        heads.push(got.slice(0, end));
        // Sent in pieces, so the reader has to put the answer together.
        let i = 0;
        const next = () => {
          const part = answer[i++];
          if (part === undefined) return void socket.end();
          socket.write(part, () => setTimeout(next, 5));
        };
        next();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    cleanups.push(() => new Promise((r) => server.close(() => r())));
    return { port: (server.address() as { port: number }).port, heads };
  }

  async function sendVia(port: number) {
    const px = await proxy();
    const s = createFetchSender({
      timeoutMs: 3_000,
      allowPrivateNetworks: true,
      userAgent: "Herald/test",
      lookup: scriptedLookup(["127.0.0.1"]),
      proxy: route(px.url),
    });
    cleanups.push(() => s.close());
    return s.send(delivery(`http://receiver.example.test:${port}/in?q=1`));
  }

  it("reads a chunked answer with trailers after a 100 Continue", async () => {
    const rx = await rawReceiver([
      "HTTP/1.1 100 Continue\r\n\r\n",
      "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 30\r\nTransfer-Encoding: chunked\r\n\r\n",
      "5;ext=1\r\nhel",
      "lo\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n",
    ]);
    const outcome = await sendVia(rx.port);
    expect(outcome).toMatchObject({
      error: "http_status",
      responseStatus: 503,
      responseBody: "hello, world",
      retryAfterMs: 30_000,
    });
    const [head] = rx.heads;
    expect(head?.split("\r\n")[0]).toBe("POST /in?q=1 HTTP/1.1");
    expect(head).toContain(`\r\nHost: receiver.example.test:${rx.port}\r\n`);
    expect(head).toContain("\r\nConnection: close");
  });

  it("reads an answer that ends when the connection closes, and fails one cut short", async () => {
    const closeDelimited = await rawReceiver(["HTTP/1.1 200 OK\r\n\r\n", "all ", "of it"]);
    expect(await sendVia(closeDelimited.port)).toMatchObject({
      ok: true,
      responseStatus: 200,
      responseBody: "all of it",
    });
    const cut = await rawReceiver(["HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", "only part"]);
    expect(await sendVia(cut.port)).toMatchObject({
      ok: false,
      error: "connection_error",
      responseStatus: 200,
      responseBody: "only part",
    });
    const silent = await rawReceiver([]);
    expect(await sendVia(silent.port)).toMatchObject({
      ok: false,
      error: "connection_error",
      responseStatus: null,
    });
  });
});
