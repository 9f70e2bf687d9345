import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createUndiciSender,
  type UndiciSenderOptions,
} from "../../../src/adapters/delivery/undici-sender.ts";
import type { Sender } from "../../../src/app/ports/sending.ts";
import { RESPONSE_BODY_LIMIT } from "../../../src/domain/delivery.ts";
import { newEndpointSecret } from "../../../src/domain/signing.ts";
import { PATIENCE_MS } from "../../support/patience.ts";
import { behaviours, type Receiver, type ReceiverOptions, startReceiver } from "../../support/receiver.ts";
import { type TestTls, testTls } from "../../support/tls.ts";
import {
  closedPort,
  delivery,
  failingLookup,
  OLD_SECRET,
  SECRET,
  scriptedLookup,
  standardWebhooksVerdict,
  verifyStandardWebhooks,
} from "./helpers.ts";

const USER_AGENT = "Herald/0.1.0";

let tls: TestTls;
let foreignTls: TestTls;
const senders: Sender[] = [];
const receivers: Receiver[] = [];

beforeAll(async () => {
  [tls, foreignTls] = await Promise.all([testTls(), testTls("foreign")]);
});

afterEach(async () => {
  await Promise.all([
    ...senders.splice(0).map((s) => s.close()),
    ...receivers.splice(0).map((r) => r.close()),
  ]);
});

function sender(overrides: Partial<UndiciSenderOptions> = {}): Sender {
  const s = createUndiciSender({
    timeoutMs: 3_000,
    allowPrivateNetworks: true,
    userAgent: USER_AGENT,
    ca: tls.caCert,
    ...overrides,
  });
  senders.push(s);
  return s;
}

async function receiver(options: Partial<ReceiverOptions> = {}): Promise<Receiver> {
  const r = await startReceiver({ tls, secrets: [SECRET], ...options });
  receivers.push(r);
  return r;
}

describe("createUndiciSender: a signed delivery", () => {
  it("sends exactly the contract's headers and the body bytes, and the receiver's verification passes", async () => {
    const rx = await receiver();
    const req = delivery(rx.url);
    const outcome = await sender().send(req);

    expect(outcome).toMatchObject({
      ok: true,
      responseStatus: 200,
      responseBody: "ok",
      error: null,
      retryAfterMs: null,
    });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);
    const [got] = await rx.waitFor(1);
    expect(got?.verdict).toEqual({ ok: true, matches: [{ signature: 0, secret: 0 }] });
    expect(got?.method).toBe("POST");
    expect(got?.path).toBe("/webhook");
    expect(got?.body.equals(Buffer.from(req.body, "utf8"))).toBe(true);
    expect(got?.headers["content-type"]).toBe("application/json");
    expect(got?.headers["user-agent"]).toBe("Herald/0.1.0");
    expect(got?.headers["x-webhook-id"]).toBe("evt_1");
    expect(got?.headers["x-webhook-timestamp"]).toBe(String(req.timestamp));
    expect(got?.headers["x-webhook-signature"]).toMatch(/^v1=[0-9a-f]{64}$/);
    // Nothing of ours beyond the five; host and content-length come from HTTP/1.1 itself.
    const names = Object.keys(got?.headers ?? {}).sort();
    expect(names.filter((n) => !["host", "content-length", "connection"].includes(n))).toEqual([
      "content-type",
      "user-agent",
      "x-webhook-id",
      "x-webhook-signature",
      "x-webhook-timestamp",
    ]);
    expect(got?.headers["content-length"]).toBe(String(Buffer.byteLength(req.body)));
  });

  it("in standard-webhooks mode sends webhook-id/timestamp/signature the specification's library verifies, and the custom headers", async () => {
    const rx = await receiver({ behaviour: verifyStandardWebhooks(SECRET) });
    const stillOnOld = await receiver({ behaviour: verifyStandardWebhooks(OLD_SECRET) });
    const custom: [string, string][] = [
      ["Authorization", "Bearer rk_custom-value"],
      ["X-Route", "eu-1"],
    ];
    const s = sender();
    for (const url of [rx.url, stillOnOld.url]) {
      const outcome = await s.send(
        delivery(url, { scheme: "standard-webhooks", headers: custom, secrets: [SECRET, OLD_SECRET] }),
      );
      expect(outcome).toMatchObject({ ok: true, responseStatus: 200 });
    }
    for (const r of [rx, stillOnOld]) {
      const [got] = await r.waitFor(1);
      expect(got?.headers["webhook-id"]).toBe("evt_1");
      expect(got?.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
      expect(got?.headers.authorization).toBe("Bearer rk_custom-value");
      expect(got?.headers["x-route"]).toBe("eu-1");
      // One scheme at a time: no X-Webhook-* headers in this mode.
      expect(Object.keys(got?.headers ?? {}).filter((n) => n.startsWith("x-webhook-"))).toEqual([]);
      expect(got?.headers["content-type"]).toBe("application/json");
    }
    // The check can fail: another secret does not verify.
    expect(standardWebhooksVerdict(rx.requests[0]!, newEndpointSecret(new Uint8Array(32)))).not.toBe("ok");
  });

  it("carries two signatures during a rotation, each verifying with its own secret", async () => {
    const rx = await receiver({ secrets: [SECRET, OLD_SECRET] });
    const stillOnOld = await receiver({ secrets: [OLD_SECRET] });
    const s = sender();

    const a = await s.send(delivery(rx.url, { secrets: [SECRET, OLD_SECRET] }));
    const b = await s.send(delivery(stillOnOld.url, { secrets: [SECRET, OLD_SECRET] }));

    expect(a.ok).toBe(true);
    expect(b.ok).toBe(true);
    const [got] = await rx.waitFor(1);
    expect(got?.headers["x-webhook-signature"]).toMatch(/^v1=[0-9a-f]{64} v1=[0-9a-f]{64}$/);
    expect(got?.verdict).toEqual({
      ok: true,
      matches: [
        { signature: 0, secret: 0 },
        { signature: 1, secret: 1 },
      ],
    });
    const [old] = await stillOnOld.waitFor(1);
    expect(old?.verdict).toEqual({ ok: true, matches: [{ signature: 1, secret: 0 }] });
  });

  it("fails verification at a receiver holding another secret (the check can fail)", async () => {
    const rx = await receiver({ secrets: [OLD_SECRET] });
    const outcome = await sender().send(delivery(rx.url));
    expect(outcome).toMatchObject({ ok: false, error: "http_status", responseStatus: 401 });
    expect(rx.requests[0]?.verdict).toEqual({ ok: false, reason: "signature_mismatch" });
  });

  it("reuses a pooled keep-alive connection for consecutive deliveries", async () => {
    const rx = await receiver();
    const s = sender();
    expect((await s.send(delivery(rx.url))).ok).toBe(true);
    // undici hands the socket back to the pool on the turn after the body ends; the dispatcher never
    // sends two deliveries within one turn, so neither does this test.
    await new Promise((r) => setImmediate(r));
    expect((await s.send(delivery(rx.url))).ok).toBe(true);
    const [first, second] = await rx.waitFor(2);
    expect(second?.connectionId).toBe(first?.connectionId);
    expect(rx.connections).toBe(1);
  });
});

describe("createUndiciSender: answers", () => {
  it("treats any 2xx as success", async () => {
    const rx = await receiver({ behaviour: behaviours.status(204) });
    expect(await sender().send(delivery(rx.url))).toMatchObject({
      ok: true,
      responseStatus: 204,
      error: null,
    });
  });

  it("reports a 500 as http_status and keeps only the first 4 KiB of a 1 MiB body", async () => {
    const big = "0123456789abcdef".repeat(65_536);
    const rx = await receiver({ behaviour: behaviours.status(500, big) });
    const outcome = await sender().send(delivery(rx.url));
    expect(outcome).toMatchObject({
      ok: false,
      error: "http_status",
      responseStatus: 500,
      retryAfterMs: null,
    });
    expect(Buffer.byteLength(outcome.responseBody ?? "")).toBe(RESPONSE_BODY_LIMIT);
    expect(outcome.responseBody).toBe(big.slice(0, RESPONSE_BODY_LIMIT));
  });

  it("decodes the kept body leniently: a character cut at the limit is dropped, bad bytes become U+FFFD", async () => {
    const cut = `${"a".repeat(RESPONSE_BODY_LIMIT - 1)}é and more`;
    const rx = await receiver({ behaviour: behaviours.status(400, cut) });
    const s = sender();
    expect((await s.send(delivery(rx.url))).responseBody).toBe("a".repeat(RESPONSE_BODY_LIMIT - 1));

    rx.setBehaviour(behaviours.status(400, new Uint8Array([0x6f, 0x6b, 0xff, 0x21])));
    expect((await s.send(delivery(rx.url))).responseBody).toBe("ok\uFFFD!");
  });

  it("parses Retry-After on 429 into retryAfterMs", async () => {
    const rx = await receiver({ behaviour: behaviours.retryAfter(429, "120") });
    const outcome = await sender().send(delivery(rx.url));
    expect(outcome).toMatchObject({
      ok: false,
      error: "http_status",
      responseStatus: 429,
      retryAfterMs: 120_000,
    });
  });

  it("parses an HTTP-date Retry-After on 503, and ignores Retry-After on other statuses", async () => {
    const at = new Date(Date.now() + 600_000).toUTCString();
    const rx = await receiver({ behaviour: behaviours.retryAfter(503, at) });
    const s = sender();
    const outcome = await s.send(delivery(rx.url));
    expect(outcome.responseStatus).toBe(503);
    expect(outcome.retryAfterMs).toBeGreaterThan(590_000);
    expect(outcome.retryAfterMs).toBeLessThanOrEqual(600_000);

    rx.setBehaviour(behaviours.status(500, "no", { "retry-after": "120" }));
    expect(await s.send(delivery(rx.url))).toMatchObject({ responseStatus: 500, retryAfterMs: null });
  });

  it("reports 410 Gone as http_status with the status, for the caller to disable the endpoint", async () => {
    const rx = await receiver({ behaviour: behaviours.gone() });
    expect(await sender().send(delivery(rx.url))).toMatchObject({
      ok: false,
      error: "http_status",
      responseStatus: 410,
      responseBody: "gone",
    });
  });

  it("never follows a redirect: 302 is a redirect error and the receiver sees one request", async () => {
    const rx = await receiver();
    rx.setBehaviour((req) =>
      req.path === "/webhook" ? behaviours.redirect(`${rx.origin}/elsewhere`) : behaviours.verify(req),
    );
    const outcome = await sender().send(delivery(rx.url));
    expect(outcome).toMatchObject({
      ok: false,
      error: "redirect",
      responseStatus: 302,
      responseBody: "moved",
    });
    // A followed redirect would have happened before send() resolved.
    expect(rx.requests.map((r) => r.path)).toEqual(["/webhook"]);
  });
});

describe("createUndiciSender: failures without an answer", () => {
  it("times out a slow receiver within the bound", async () => {
    const rx = await receiver({ behaviour: behaviours.slow(20_000) });
    const started = performance.now();
    const outcome = await sender({ timeoutMs: 400 }).send(delivery(rx.url));
    const wall = performance.now() - started;
    expect(outcome).toMatchObject({ ok: false, error: "timeout", responseStatus: null, responseBody: null });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(390);
    // Ended by the sender's bound, not by the receiver's answer 20 s later.
    expect(wall).toBeLessThan(10_000);
    expect(rx.requests).toHaveLength(1);
  });

  it("counts reading the body into the bound: a body that stalls after the headers times out", async () => {
    const rx = await receiver({ behaviour: behaviours.stallBody(20_000, "partial-body", 200) });
    const started = performance.now();
    const outcome = await sender({ timeoutMs: 400 }).send(delivery(rx.url));
    // Ended by the sender's bound, not by the rest of the body 20 s later.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(outcome).toMatchObject({
      ok: false,
      error: "timeout",
      responseStatus: 200,
      responseBody: "partia",
    });
  });

  it("times out a receiver that never answers", async () => {
    const rx = await receiver({ behaviour: behaviours.hang() });
    const outcome = await sender({ timeoutMs: 300 }).send(delivery(rx.url));
    expect(outcome.error).toBe("timeout");
  });

  it("reports a reset connection as connection_error", async () => {
    const rx = await receiver({ behaviour: behaviours.reset() });
    const outcome = await sender().send(delivery(rx.url));
    expect(outcome).toMatchObject({ ok: false, error: "connection_error", responseStatus: null });
    expect(rx.requests).toHaveLength(1);
  });

  it("reports a connection closed without an answer as connection_error", async () => {
    const rx = await receiver({ behaviour: behaviours.close() });
    expect((await sender().send(delivery(rx.url))).error).toBe("connection_error");
  });

  it("reports a refused port as connection_error", async () => {
    const port = await closedPort();
    const outcome = await sender().send(delivery(`https://127.0.0.1:${port}/webhook`));
    expect(outcome).toMatchObject({ ok: false, error: "connection_error", responseStatus: null });
  });

  it("reports a certificate from an untrusted CA as tls_error", async () => {
    const rx = await receiver({ tls: foreignTls });
    const outcome = await sender().send(delivery(rx.url));
    expect(outcome).toMatchObject({ ok: false, error: "tls_error", responseStatus: null });
    expect(rx.requests).toHaveLength(0);
  });

  it("reports a certificate for another name as tls_error", async () => {
    const rx = await receiver();
    // The certificate is for localhost/127.0.0.1; reach the same socket under another name.
    const s = sender({ lookup: scriptedLookup(["127.0.0.1"]) });
    const outcome = await s.send(delivery(`https://hooks.example.test:${rx.port}/webhook`));
    expect(outcome.error).toBe("tls_error");
  });

  it("reports a name that does not resolve as dns_error (ENOTFOUND, EAI_AGAIN, empty answer)", async () => {
    for (const lookup of [failingLookup("ENOTFOUND"), failingLookup("EAI_AGAIN"), scriptedLookup([])]) {
      const outcome = await sender({ lookup }).send(delivery("https://nowhere.example.test/webhook"));
      expect(outcome).toMatchObject({ ok: false, error: "dns_error", responseStatus: null });
    }
  });

  it("reports a URL it cannot send to as connection_error", async () => {
    const s = sender();
    expect((await s.send(delivery("not a url"))).error).toBe("connection_error");
    expect((await s.send(delivery("ftp://127.0.0.1/x"))).error).toBe("connection_error");
  });
});

describe("createUndiciSender: address guard", () => {
  it("refuses literal loopback addresses before connecting: no connection reaches the receiver", async () => {
    const rx = await receiver();
    const s = sender({ allowPrivateNetworks: false });
    for (const host of ["127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]"]) {
      const outcome = await s.send(delivery(`https://${host}:${rx.port}/webhook`));
      expect(outcome, host).toMatchObject({ ok: false, error: "blocked_address", responseStatus: null });
    }
    expect(rx.connections).toBe(0);
    expect(rx.requests).toHaveLength(0);
  });

  it("refuses a name resolving to loopback, through the system resolver too", async () => {
    const rx = await receiver();
    const injected = await sender({
      allowPrivateNetworks: false,
      lookup: scriptedLookup(["127.0.0.1"]),
    }).send(delivery(`https://hooks.example.test:${rx.port}/webhook`));
    expect(injected.error).toBe("blocked_address");
    const system = await sender({ allowPrivateNetworks: false }).send(
      delivery(`https://localhost:${rx.port}/webhook`),
    );
    expect(system.error).toBe("blocked_address");
    expect(rx.connections).toBe(0);
  });

  it("refuses a name when ANY of its addresses is blocked", async () => {
    // Staged on loopback: 127.0.0.1 plays a public address, 127.0.0.2 a private one.
    const rx = await receiver();
    const lookup = scriptedLookup(["127.0.0.1", "127.0.0.2"]);
    const s = sender({ allowPrivateNetworks: false, lookup, isBlocked: (ip) => ip !== "127.0.0.1" });
    const outcome = await s.send(delivery(`https://localhost:${rx.port}/webhook`));
    expect(outcome.error).toBe("blocked_address");
    expect(lookup.calls).toEqual(["localhost"]);
    expect(rx.connections).toBe(0);
  });

  it("checks every new connection, so DNS rebinding to a private address is refused at the second lookup", async () => {
    // Staged on loopback: 127.0.0.1 plays the public address, 127.0.0.2 the private one.
    const rx = await receiver({ behaviour: behaviours.status(200, "ok", { connection: "close" }) });
    const lookup = scriptedLookup(["127.0.0.1"], ["127.0.0.2"]);
    const s = sender({ allowPrivateNetworks: false, lookup, isBlocked: (ip) => ip !== "127.0.0.1" });
    const url = `https://localhost:${rx.port}/webhook`;

    const first = await s.send(delivery(url));
    expect(first).toMatchObject({ ok: true, responseStatus: 200 });
    const second = await s.send(delivery(url));
    expect(second).toMatchObject({ ok: false, error: "blocked_address", responseStatus: null });

    expect(lookup.calls).toEqual(["localhost", "localhost"]);
    expect(rx.requests).toHaveLength(1);
    expect(rx.connections).toBe(1);
  });

  it("lets private addresses through when allowPrivateNetworks is true", async () => {
    const rx = await receiver();
    const s = sender({ allowPrivateNetworks: true, lookup: scriptedLookup(["127.0.0.1"]) });
    expect((await s.send(delivery(`https://localhost:${rx.port}/webhook`))).ok).toBe(true);
    expect((await s.send(delivery(rx.url))).ok).toBe(true);
    await rx.waitFor(2);
  });
});

describe("createUndiciSender: the runtime's trust store", () => {
  const run = promisify(execFile);
  const fixture = fileURLToPath(new URL("./fixtures/send-once.ts", import.meta.url));

  async function sendFromChild(url: string, env: Record<string, string>) {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
    if (!("NODE_EXTRA_CA_CERTS" in env)) delete childEnv.NODE_EXTRA_CA_CERTS;
    const { stdout } = await run(process.execPath, [fixture, url, SECRET], {
      env: childEnv,
      timeout: PATIENCE_MS,
    });
    return JSON.parse(stdout.trim().split("\n").at(-1) ?? "null");
  }

  it("trusts a private CA given by NODE_EXTRA_CA_CERTS, and only then", async () => {
    const rx = await receiver();
    const trusted = await sendFromChild(rx.url, { NODE_EXTRA_CA_CERTS: tls.caCertPath });
    expect(trusted).toMatchObject({ ok: true, responseStatus: 200, error: null });
    const [got] = await rx.waitFor(1);
    expect(got?.verdict.ok).toBe(true);

    const untrusted = await sendFromChild(rx.url, {});
    expect(untrusted).toMatchObject({ ok: false, error: "tls_error" });
    expect(rx.requests).toHaveLength(1);
  });
});
