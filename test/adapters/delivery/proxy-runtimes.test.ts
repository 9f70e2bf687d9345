import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectProxy, startConnectProxy } from "../../support/connect-proxy.ts";
import { behaviours, type Receiver, startReceiver } from "../../support/receiver.ts";
import { testTls } from "../../support/tls.ts";
import { fixtureRuntimes, runs, sendOn } from "./fixture-runtimes.ts";
import { closedPort, SECRET } from "./helpers.ts";

// The fetch sender's proxied path on the runtimes it is for (Bun and Deno), in child processes, through
// a real CONNECT proxy on loopback, with the test CA trusted the runtime's own way. Node's sender is
// proved in-process by proxy-tunnel.test.ts.
const fixture = fileURLToPath(new URL("./fixtures/proxy-send.ts", import.meta.url));
const RUNTIMES = fixtureRuntimes(fixture);

let rx: Receiver;
let plain: Receiver;
let px: ConnectProxy;
let caPath: string;

beforeAll(async () => {
  const tls = await testTls();
  caPath = tls.caCertPath;
  rx = await startReceiver({ tls, secrets: [SECRET] });
  plain = await startReceiver({ secrets: [SECRET] });
  px = await startConnectProxy({ credentials: "herald:s3cret" });
  rx.setBehaviour((req) =>
    req.path === "/big"
      ? behaviours.status(500, "x".repeat(100_000))
      : req.path === "/slow"
        ? behaviours.slow(20_000)
        : behaviours.verify(req),
  );
  // A proxy path by request target: refusals scripted per port so one proxy serves every case.
  px.setAnswer((req) => (req.target.endsWith(":1") ? 403 : req.target.endsWith(":2") ? "hang" : "tunnel"));
});

afterAll(async () => {
  await Promise.all([rx?.close(), plain?.close(), px?.close()]);
});

describe.each(RUNTIMES)("createFetchSender through an egress proxy on $name", (runtime) => {
  it("tunnels to the checked address, verifies the original host, refuses private names first", async () => {
    expect(
      runs(runtime.name),
      `${runtime.name} binary from runtimes/bun-deno (npm run test:all installs it) does not run`,
    ).toBe(true);
    const proxy = `http://herald:s3cret@127.0.0.1:${px.port}`;
    const local = { localhost: ["127.0.0.1"], "wrong-name.test": ["127.0.0.1"] };
    const cases = [
      { url: `https://localhost:${rx.port}/webhook`, proxy, dns: local },
      { url: `https://wrong-name.test:${rx.port}/webhook`, proxy, dns: local },
      {
        url: "https://internal.example.test/never",
        proxy,
        allowPrivateNetworks: false,
        dns: { "internal.example.test": ["10.20.30.40"] },
      },
      { url: `http://localhost:${plain.port}/plain`, proxy, dns: local },
      { url: `https://localhost:${rx.port}/big`, proxy, dns: local },
      { url: `https://localhost:${rx.port}/slow`, proxy, dns: local, timeoutMs: 500 },
      {
        url: `https://localhost:${rx.port}/webhook`,
        proxy: `http://herald:wrong@127.0.0.1:${px.port}`,
        dns: local,
      },
      { url: "https://localhost:1/webhook", proxy, dns: local },
      { url: "https://localhost:2/webhook", proxy, dns: local, timeoutMs: 500 },
      {
        url: `https://localhost:${rx.port}/webhook`,
        proxy: `http://127.0.0.1:${await closedPort()}`,
        dns: local,
      },
    ];
    const before = { proxy: px.requests.length, rx: rx.requests.length, plain: plain.requests.length };
    const out = await sendOn(runtime, cases, SECRET, caPath);
    expect(out.map((o) => [o.error, o.responseStatus])).toEqual([
      [null, 200],
      ["tls_error", null],
      ["blocked_address", null],
      [null, 200],
      ["http_status", 500],
      ["timeout", null],
      ["connection_error", null],
      ["connection_error", null],
      ["timeout", null],
      ["connection_error", null],
    ]);
    expect(out[4]?.responseBody).toBe("x".repeat(4096));
    expect(out[5]?.durationMs).toBeLessThan(10_000);

    // The proxy was asked for addresses only, never a name; the private name never reached it.
    const asked = px.requests.slice(before.proxy);
    expect(asked.map((r) => [r.method, r.target, r.status])).toEqual([
      ["CONNECT", `127.0.0.1:${rx.port}`, 200],
      ["CONNECT", `127.0.0.1:${rx.port}`, 200],
      ["CONNECT", `127.0.0.1:${plain.port}`, 200],
      ["CONNECT", `127.0.0.1:${rx.port}`, 200],
      ["CONNECT", `127.0.0.1:${rx.port}`, 200],
      ["CONNECT", `127.0.0.1:${rx.port}`, 407],
      ["CONNECT", "127.0.0.1:1", 403],
      ["CONNECT", "127.0.0.1:2", null],
    ]);
    const seen = rx.requests.slice(before.rx);
    expect(seen.map((r) => [r.path, r.headers.host, r.sni, r.verdict.ok])).toEqual([
      ["/webhook", `localhost:${rx.port}`, "localhost", true],
      ["/big", `localhost:${rx.port}`, "localhost", true],
      ["/slow", `localhost:${rx.port}`, "localhost", true],
    ]);
    const [http] = plain.requests.slice(before.plain);
    expect([http?.path, http?.headers.host, http?.verdict.ok]).toEqual([
      "/plain",
      `localhost:${plain.port}`,
      true,
    ]);
  });
});
