import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { behaviours, type Receiver, startReceiver } from "../../support/receiver.ts";
import { type TestClientTls, testClientTls, testTls } from "../../support/tls.ts";
import { fixtureRuntimes, runs, sendOn } from "./fixture-runtimes.ts";
import { closedPort, SECRET, standardWebhooksVerdict, verifyStandardWebhooks } from "./helpers.ts";

// The Fetch sender on the runtimes it is for, in child processes, against the HTTPS receiver with
// the test CA trusted the runtime's own way (Bun: NODE_EXTRA_CA_CERTS; Deno: DENO_CERT).
const fixture = fileURLToPath(new URL("./fixtures/fetch-send.ts", import.meta.url));
const RUNTIMES = fixtureRuntimes(fixture);

let rx: Receiver;
let foreign: Receiver;
/** Requires a client certificate signed by `clients`' CA (mutual TLS). */
let mtls: Receiver;
let clients: TestClientTls;
let caPath: string;
const big = "0123456789abcdef".repeat(65_536);

beforeAll(async () => {
  const [tls, foreignTls] = await Promise.all([testTls(), testTls("foreign")]);
  clients = await testClientTls();
  mtls = await startReceiver({ tls: { ...tls, clientCa: clients.caCert }, secrets: [SECRET] });
  caPath = tls.caCertPath;
  rx = await startReceiver({ tls, secrets: [SECRET] });
  foreign = await startReceiver({ tls: foreignTls, secrets: [SECRET] });
  const byPath: Record<string, ReturnType<typeof behaviours.status>> = {
    "/redirect": behaviours.redirect(`${rx.origin}/elsewhere`),
    "/slow": behaviours.slow(20_000),
    "/big": behaviours.status(500, big),
    "/reset": behaviours.reset(),
    "/retry": behaviours.retryAfter(429, "120"),
  };
  const standard = verifyStandardWebhooks(SECRET);
  rx.setBehaviour((req) =>
    req.path === "/standard" ? standard(req) : (byPath[req.path] ?? behaviours.verify(req)),
  );
});

afterAll(async () => {
  await Promise.all([rx?.close(), foreign?.close(), mtls?.close()]);
});

describe.each(RUNTIMES)("createFetchSender on $name", (runtime) => {
  // Bun and Deno are devDependencies, so `npm install` provides them; a missing binary is a failure, not a skip.
  it("delivers, verifies and classifies like the Node sender", async () => {
    expect(
      runs(runtime.name),
      `${runtime.name} binary from runtimes/bun-deno (npm run test:all installs it) does not run`,
    ).toBe(true);
    const port = await closedPort();
    const cases = [
      { url: `${rx.origin}/webhook` },
      { url: `${rx.origin}/redirect` },
      { url: `${rx.origin}/slow`, timeoutMs: 400 },
      { url: `${rx.origin}/big` },
      { url: `${rx.origin}/reset` },
      { url: `${rx.origin}/retry` },
      { url: foreign.url },
      { url: `https://127.0.0.1:${port}/webhook` },
      { url: `${rx.origin}/never`, allowPrivateNetworks: false },
      {
        url: `https://localhost:${rx.port}/never`,
        allowPrivateNetworks: false,
        dns: { localhost: ["127.0.0.1"] },
      },
      { url: "https://nowhere.example.test/never", allowPrivateNetworks: false, dns: {} },
      {
        url: `${rx.origin}/standard`,
        scheme: "standard-webhooks",
        headers: [["X-Api-Key", "rk_runtime"]],
      },
    ];
    const before = rx.requests.length;
    const out = await sendOn(runtime, cases, SECRET, caPath);
    const summary = out.map((o) => [o.error, o.responseStatus]);
    expect(summary).toEqual([
      [null, 200],
      ["redirect", 302],
      ["timeout", null],
      ["http_status", 500],
      ["connection_error", null],
      ["http_status", 429],
      ["tls_error", null],
      ["connection_error", null],
      ["blocked_address", null],
      ["blocked_address", null],
      ["dns_error", null],
      [null, 200],
    ]);
    expect(out[0]?.ok).toBe(true);
    // Ended by the sender's bound, not by the receiver's answer 20 s later.
    expect(out[2]?.durationMs).toBeLessThan(10_000);
    expect(out[3]?.responseBody).toBe(big.slice(0, 4096));
    expect(out[5]?.retryAfterMs).toBe(120_000);

    const seen = rx.requests.slice(before);
    expect(seen.map((r) => r.path)).toEqual([
      "/webhook",
      "/redirect",
      "/slow",
      "/big",
      "/reset",
      "/retry",
      "/standard",
    ]);
    expect(seen.slice(0, -1).every((r) => r.verdict.ok)).toBe(true);
    // Standard Webhooks mode, verified by the specification's own library, with the custom header.
    const sw = seen.at(-1)!;
    expect(standardWebhooksVerdict(sw, SECRET)).toBe("ok");
    expect(sw.headers["webhook-id"]).toBe("evt_rt");
    expect(sw.headers["x-api-key"]).toBe("rk_runtime");
    expect(sw.headers["x-webhook-signature"]).toBeUndefined();
    expect(seen[0]?.headers["user-agent"]).toBe("Herald/test");
    expect(seen[0]?.headers["x-webhook-id"]).toBe("evt_rt");
  });

  it("presents each endpoint's client certificate to a receiver requiring one, and only its own", async () => {
    const id = (endpoint: string, who: "alice" | "bob" | "mallory" | "expired") => ({
      id: `${endpoint}:sealed`,
      certificate: clients[who].cert,
      key: clients[who].key,
    });
    const a = id("endpoint-a", "alice");
    const b = id("endpoint-b", "bob");
    const port = await closedPort();
    const cases = [
      { url: mtls.url, clientCertificate: a },
      { url: mtls.url, clientCertificate: a, keep: true },
      { url: mtls.url, clientCertificate: b, keep: true },
      { url: mtls.url, clientCertificate: a, keep: true },
      { url: mtls.url, keep: true },
      { url: mtls.url, clientCertificate: b, keep: true },
      { url: mtls.url, clientCertificate: id("m", "mallory") },
      { url: mtls.url, clientCertificate: id("x", "expired") },
      // A receiver that asks for none is reached all the same.
      { url: rx.url, clientCertificate: a },
      // The address guard holds for a request with a certificate too.
      {
        url: `https://localhost:${mtls.port}/never`,
        allowPrivateNetworks: false,
        dns: { localhost: ["127.0.0.1"] },
        clientCertificate: a,
      },
      { url: `https://127.0.0.1:${port}/webhook`, clientCertificate: a },
    ];
    const before = mtls.requests.length;
    const out = await sendOn(runtime, cases, SECRET, caPath);
    const summary = out.map((o) => [o.error, o.responseStatus]);
    // A receiver's refusal after the handshake: Deno names TLS in every case; Bun reports a missing
    // certificate as a TLS failure and a refused one as a reset connection (README, "Mutual TLS").
    const refused = runtime.name === "deno" ? "tls_error" : "connection_error";
    expect(summary).toEqual([
      [null, 200],
      [null, 200],
      [null, 200],
      [null, 200],
      ["tls_error", null],
      [null, 200],
      [refused, null],
      [refused, null],
      [null, 200],
      ["blocked_address", null],
      ["connection_error", null],
    ]);
    const seen = mtls.requests.slice(before);
    expect(seen.map((r) => r.clientCertificate)).toEqual(["alice", "alice", "bob", "alice", "bob"]);
    expect(seen.every((r) => r.verdict.ok)).toBe(true);
    // Kept-alive connections carry one identity each.
    const byConnection = new Map<number, Set<string | null>>();
    for (const r of seen)
      byConnection.set(
        r.connectionId,
        (byConnection.get(r.connectionId) ?? new Set()).add(r.clientCertificate),
      );
    expect([...byConnection.values()].every((names) => names.size === 1)).toBe(true);
  });
});
