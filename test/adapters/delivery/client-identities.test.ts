import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createUndiciSender,
  type UndiciSenderOptions,
} from "../../../src/adapters/delivery/undici-sender.ts";
import type { ClientIdentity, Sender } from "../../../src/app/ports/sending.ts";
import { type Receiver, startReceiver } from "../../support/receiver.ts";
import {
  type TestClientIdentity,
  type TestClientTls,
  type TestTls,
  testClientTls,
  testTls,
} from "../../support/tls.ts";
import { delivery, SECRET, scriptedLookup } from "./helpers.ts";

// Mutual TLS on Node: the undici sender presents an endpoint's client certificate to a loopback HTTPS
// receiver that requires one signed by its own CA, keeps connections per identity, and classifies a
// refusal as tls_error. (Bun and Deno: fetch-sender-runtimes.test.ts.)

let tls: TestTls;
let clients: TestClientTls;
const senders: Sender[] = [];
const receivers: Receiver[] = [];

beforeAll(async () => {
  [tls, clients] = await Promise.all([testTls(), testClientTls()]);
});

afterEach(async () => {
  await Promise.all([
    ...senders.splice(0).map((s) => s.close()),
    ...receivers.splice(0).map((r) => r.close()),
  ]);
});

function sender(overrides: Partial<UndiciSenderOptions> = {}): Sender {
  const s = createUndiciSender({
    timeoutMs: 5_000,
    allowPrivateNetworks: true,
    userAgent: "Herald/test",
    ca: tls.caCert,
    ...overrides,
  });
  senders.push(s);
  return s;
}

/** A receiver requiring a client certificate signed by the test client CA. */
async function mtlsReceiver(): Promise<Receiver> {
  const r = await startReceiver({ tls: { ...tls, clientCa: clients.caCert }, secrets: [SECRET] });
  receivers.push(r);
  return r;
}

const identity = (endpoint: string, id: TestClientIdentity): ClientIdentity => ({
  id: `${endpoint}:sealed`,
  certificate: id.cert,
  key: id.key,
});

describe("the undici sender with client certificates", () => {
  it("presents each endpoint's own certificate, never another's, on kept-alive connections", async () => {
    const rx = await mtlsReceiver();
    const s = sender();
    const a = identity("endpoint-a", clients.alice);
    const b = identity("endpoint-b", clients.bob);
    const order = [a, b, a, a, b, b, a, b];
    const outcomes = [];
    for (const who of order) outcomes.push(await s.send(delivery(rx.url, { clientCertificate: who })));
    // And at once, interleaved.
    const parallel = await Promise.all(
      order.map((who) => s.send(delivery(`${rx.url}?p`, { clientCertificate: who }))),
    );
    expect([...outcomes, ...parallel].map((o) => [o.error, o.responseStatus])).toEqual(
      Array(order.length * 2).fill([null, 200]),
    );
    const seen = rx.requests.map((r) => r.clientCertificate);
    expect(seen.slice(0, order.length)).toEqual(order.map((who) => (who === a ? "alice" : "bob")));
    expect(seen.filter((n) => n === "alice")).toHaveLength(8);
    expect(rx.requests.every((r) => r.verdict.ok)).toBe(true);
    // Connections are reused per identity, and no connection carried both.
    const byConnection = new Map<number, Set<string | null>>();
    for (const r of rx.requests) {
      byConnection.set(
        r.connectionId,
        (byConnection.get(r.connectionId) ?? new Set()).add(r.clientCertificate),
      );
    }
    expect([...byConnection.values()].every((names) => names.size === 1)).toBe(true);
    expect(rx.connections).toBeLessThan(rx.requests.length);
  });

  it("a replaced certificate (a new identity of the same endpoint) is presented at once", async () => {
    const rx = await mtlsReceiver();
    const s = sender();
    await s.send(delivery(rx.url, { clientCertificate: { ...identity("e", clients.alice), id: "e:one" } }));
    await s.send(delivery(rx.url, { clientCertificate: { ...identity("e", clients.bob), id: "e:two" } }));
    expect(rx.requests.map((r) => r.clientCertificate)).toEqual(["alice", "bob"]);
  });

  it("classifies a refused certificate, and none where one is required, as tls_error", async () => {
    const rx = await mtlsReceiver();
    const s = sender();
    // No certificate: the receiver's alert (certificate_required) is what is reported.
    const none = await s.send(delivery(rx.url));
    // Self-signed, and expired though signed by the CA: Node's server closes without an alert.
    const mallory = await s.send(delivery(rx.url, { clientCertificate: identity("m", clients.mallory) }));
    const expired = await s.send(delivery(rx.url, { clientCertificate: identity("x", clients.expired) }));
    for (const o of [none, mallory, expired]) {
      expect(o.ok).toBe(false);
      expect(o.error).toBe("tls_error");
      expect(o.responseStatus).toBeNull();
    }
    expect(rx.requests).toHaveLength(0);
    // The same sender still delivers with a good one.
    const good = await s.send(delivery(rx.url, { clientCertificate: identity("a", clients.alice) }));
    expect(good.error).toBeNull();
  });

  it("a receiver that asks for no certificate is reached all the same; answers keep their meaning", async () => {
    const plain = await startReceiver({ tls, secrets: [SECRET] });
    receivers.push(plain);
    const s = sender();
    const o = await s.send(delivery(plain.url, { clientCertificate: identity("a", clients.alice) }));
    expect([o.error, o.responseStatus]).toEqual([null, 200]);
    expect(plain.requests[0]?.clientCertificate).toBeNull();
    plain.setBehaviour({ kind: "respond", status: 503 });
    const failed = await s.send(delivery(plain.url, { clientCertificate: identity("a", clients.alice) }));
    expect([failed.error, failed.responseStatus]).toEqual(["http_status", 503]);
  });

  it("keeps the address guard: a name resolving to a blocked address is refused before connecting", async () => {
    const rx = await mtlsReceiver();
    const s = sender({ allowPrivateNetworks: false, lookup: scriptedLookup(["127.0.0.1"]) });
    const byName = await s.send(
      delivery(`https://localhost:${rx.port}/webhook`, { clientCertificate: identity("a", clients.alice) }),
    );
    const byLiteral = await s.send(delivery(rx.url, { clientCertificate: identity("a", clients.alice) }));
    expect([byName.error, byLiteral.error]).toEqual(["blocked_address", "blocked_address"]);
    expect(rx.connections).toBe(0);
  });
});
