import { describe, expect, it } from "vitest";
import { fetchClientCertificates } from "../../../src/adapters/delivery/fetch-client-certificates.ts";
import { createFetchSender } from "../../../src/adapters/delivery/fetch-sender.ts";
import { delivery } from "./helpers.ts";

// The runtime's way of presenting a client certificate with fetch, on stand-in runtimes (the real Bun
// and Deno: fetch-sender-runtimes.test.ts).
const identity = (id: string) => ({ id, certificate: `cert-${id}`, key: `key-${id}` });

describe("fetchClientCertificates", () => {
  it("on Bun: a tls option per request", async () => {
    const bun = fetchClientCertificates({ Bun: {} } as unknown as typeof globalThis);
    expect(bun.present(identity("a")).init).toEqual({ tls: { cert: "cert-a", key: "key-a" } });
  });

  it("on Deno: one HttpClient per identity, closed once retired and idle", async () => {
    const made: { opts: unknown; closed: number }[] = [];
    const deno = {
      createHttpClient(opts: unknown) {
        const c = {
          opts,
          closed: 0,
          close: () => {
            c.closed += 1;
          },
        };
        made.push(c);
        return c;
      },
    };
    const certs = fetchClientCertificates({ Deno: deno } as unknown as typeof globalThis);
    const first = certs.present(identity("a"));
    const again = certs.present(identity("a"));
    const other = certs.present(identity("b"));
    expect(made.map((c) => c.opts)).toEqual([
      { cert: "cert-a", key: "key-a" },
      { cert: "cert-b", key: "key-b" },
    ]);
    expect(first.init.client).toBe(again.init.client);
    expect(other.init.client).not.toBe(first.init.client);
    first.release();
    other.release();
    await certs.close();
    // "a" still has a request in flight: closed when it ends, not before; "b" at once.
    expect(made.map((c) => c.closed)).toEqual([0, 1]);
    again.release();
    again.release();
    expect(made.map((c) => c.closed)).toEqual([1, 1]);
  });

  it("where fetch cannot present one (Node's), the attempt fails as tls_error without sending", async () => {
    const s = createFetchSender({ timeoutMs: 2_000, allowPrivateNetworks: true, userAgent: "Herald/test" });
    const o = await s.send(delivery("https://127.0.0.1:9/webhook", { clientCertificate: identity("a") }));
    await s.close();
    expect([o.error, o.responseStatus]).toEqual(["tls_error", null]);
  });
});
