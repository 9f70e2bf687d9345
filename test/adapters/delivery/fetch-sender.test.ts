import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createFetchSender, type FetchSenderOptions } from "../../../src/adapters/delivery/fetch-sender.ts";
import type { Sender } from "../../../src/app/ports/sending.ts";
import { RESPONSE_BODY_LIMIT } from "../../../src/domain/delivery.ts";
import { newEndpointSecret } from "../../../src/domain/signing.ts";
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

// In-process on Node's own fetch. Node's fetch cannot be given a CA, so these use a plain HTTP
// receiver; HTTPS with the test CA runs on Bun and Deno in fetch-sender-runtimes.test.ts.
let tls: TestTls;
const senders: Sender[] = [];
const receivers: Receiver[] = [];

beforeAll(async () => {
  tls = await testTls();
});

afterEach(async () => {
  await Promise.all([
    ...senders.splice(0).map((s) => s.close()),
    ...receivers.splice(0).map((r) => r.close()),
  ]);
});

function sender(overrides: Partial<FetchSenderOptions> = {}): Sender {
  const s = createFetchSender({
    timeoutMs: 3_000,
    allowPrivateNetworks: true,
    userAgent: "Herald/0.1.0",
    ...overrides,
  });
  senders.push(s);
  return s;
}

async function receiver(options: Partial<ReceiverOptions> = {}): Promise<Receiver> {
  const r = await startReceiver({ secrets: [SECRET], ...options });
  receivers.push(r);
  return r;
}

describe("createFetchSender on Node's fetch", () => {
  it("sends the contract's headers and a body the receiver verifies", async () => {
    const rx = await receiver();
    const req = delivery(rx.url);
    expect(await sender().send(req)).toMatchObject({
      ok: true,
      responseStatus: 200,
      responseBody: "ok",
      error: null,
    });
    const [got] = await rx.waitFor(1);
    expect(got?.verdict.ok).toBe(true);
    expect(got?.body.equals(Buffer.from(req.body))).toBe(true);
    expect(got?.headers).toMatchObject({
      "content-type": "application/json",
      "user-agent": "Herald/0.1.0",
      "x-webhook-id": "evt_1",
      "x-webhook-timestamp": String(req.timestamp),
    });
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

  it("does not follow a redirect", async () => {
    const rx = await receiver();
    rx.setBehaviour((r) =>
      r.path === "/webhook" ? behaviours.redirect(`${rx.origin}/elsewhere`) : behaviours.verify(r),
    );
    expect(await sender().send(delivery(rx.url))).toMatchObject({
      ok: false,
      error: "redirect",
      responseStatus: 302,
    });
    expect(rx.requests.map((r) => r.path)).toEqual(["/webhook"]);
  });

  it("keeps 4 KiB of a 1 MiB error body and reads Retry-After on 429", async () => {
    const big = "0123456789abcdef".repeat(65_536);
    const rx = await receiver({ behaviour: behaviours.status(500, big) });
    const s = sender();
    const outcome = await s.send(delivery(rx.url));
    expect(outcome).toMatchObject({ error: "http_status", responseStatus: 500 });
    expect(outcome.responseBody).toBe(big.slice(0, RESPONSE_BODY_LIMIT));

    rx.setBehaviour(behaviours.retryAfter(429, "120"));
    expect(await s.send(delivery(rx.url))).toMatchObject({ responseStatus: 429, retryAfterMs: 120_000 });
  });

  it("times out a slow receiver within the bound", async () => {
    const rx = await receiver({ behaviour: behaviours.slow(20_000) });
    const started = performance.now();
    const outcome = await sender({ timeoutMs: 300 }).send(delivery(rx.url));
    expect(outcome.error).toBe("timeout");
    // Ended by the sender's bound, not by the receiver's answer 20 s later; how close to 300 ms is the
    // machine's business.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it("classifies reset, refused and untrusted TLS", async () => {
    const rx = await receiver({ behaviour: behaviours.reset() });
    const s = sender();
    expect((await s.send(delivery(rx.url))).error).toBe("connection_error");
    expect((await s.send(delivery(`http://127.0.0.1:${await closedPort()}/`))).error).toBe(
      "connection_error",
    );
    // Node's fetch trusts only its own store, so the test CA's certificate is untrusted here.
    const secure = await receiver({ tls });
    expect((await s.send(delivery(secure.url))).error).toBe("tls_error");
    expect(secure.requests).toHaveLength(0);
  });

  it("refuses blocked addresses before sending: literal, resolved, and any-of-several", async () => {
    const rx = await receiver();
    const literal = await sender({ allowPrivateNetworks: false }).send(delivery(rx.url));
    expect(literal.error).toBe("blocked_address");
    const named = await sender({ allowPrivateNetworks: false, lookup: scriptedLookup(["127.0.0.1"]) }).send(
      delivery(`http://localhost:${rx.port}/webhook`),
    );
    expect(named.error).toBe("blocked_address");
    const mixed = await sender({
      allowPrivateNetworks: false,
      lookup: scriptedLookup(["127.0.0.1", "127.0.0.2"]),
      isBlocked: (ip) => ip !== "127.0.0.1",
    }).send(delivery(`http://localhost:${rx.port}/webhook`));
    expect(mixed.error).toBe("blocked_address");
    expect(rx.connections).toBe(0);

    const allowed = await sender({
      allowPrivateNetworks: false,
      lookup: scriptedLookup(["127.0.0.1"]),
      isBlocked: (ip) => ip !== "127.0.0.1",
    }).send(delivery(`http://localhost:${rx.port}/webhook`));
    expect(allowed.ok).toBe(true);
  });

  it("reports a name that does not resolve as dns_error", async () => {
    for (const code of ["ENOTFOUND", "EAI_AGAIN"]) {
      const outcome = await sender({ allowPrivateNetworks: false, lookup: failingLookup(code) }).send(
        delivery("https://nowhere.example.test/"),
      );
      expect(outcome.error).toBe("dns_error");
    }
  });

  it("waits for deliveries in flight on close, then refuses new ones", async () => {
    const rx = await receiver({ behaviour: behaviours.slow(150) });
    const s = sender();
    const pending = s.send(delivery(rx.url));
    await rx.waitFor(1);
    await s.close();
    expect((await pending).ok).toBe(true);
    expect((await s.send(delivery(rx.url))).error).toBe("connection_error");
  });
});
