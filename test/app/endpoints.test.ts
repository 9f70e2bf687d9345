import { beforeAll, describe, expect, it } from "vitest";
import { createAesGcmCipher } from "../../src/adapters/crypto/aes-gcm-cipher.ts";
import { createCertificateReader } from "../../src/adapters/crypto/client-certificates.ts";
import { createSubjectKeys } from "../../src/adapters/crypto/subject-keys.ts";
import { createMemoryRepositories } from "../../src/adapters/memory/repositories.ts";
import { systemClock, systemIds } from "../../src/adapters/system.ts";
import { endpointUseCases } from "../../src/app/endpoints.ts";
import type { SecretCipher } from "../../src/app/ports/system.ts";
import { DomainError, type ValidationIssue } from "../../src/domain/errors.ts";
import { type TestClientTls, testClientTls } from "../support/tls.ts";

const scope = { tenantId: "t", projectId: "p" };
const EVENTS = ["message.delivered" as const];
const HTTPS = "https://receiver.example.com/hook";
const HTTP = "http://receiver.example.com/hook";

/** Endpoint use cases over memory repositories, http:// URLs allowed, with a cipher that counts its seals. */
async function setup() {
  const real = await createAesGcmCipher(crypto.getRandomValues(new Uint8Array(32)));
  const sealed: string[] = [];
  const cipher: SecretCipher = {
    seal: (plain) => {
      sealed.push(plain);
      return real.seal(plain);
    },
    open: (s) => real.open(s),
  };
  const repos = createMemoryRepositories();
  const endpoints = endpointUseCases({
    repos,
    clock: systemClock,
    ids: systemIds,
    cipher,
    subjects: await createSubjectKeys(crypto.getRandomValues(new Uint8Array(32))),
    certificates: createCertificateReader(),
    signal: { notify() {} },
    policy: { allowHttpUrls: true, allowPrivateNetworks: false },
  });
  return { endpoints, repos, sealed };
}

/** The issues of the validation failure `run` must end in. */
async function refused(run: Promise<unknown>): Promise<ValidationIssue[]> {
  const e = await run.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(DomainError);
  expect((e as DomainError).kind).toBe("validation_failed");
  return (e as DomainError).issues;
}

describe("endpoint use cases: what is refused, before any key or header value is sealed", () => {
  let tls: TestClientTls;
  beforeAll(async () => {
    tls = await testClientTls();
  });
  const cert = () => ({ certificate: tls.alice.cert, privateKey: tls.alice.key });

  it("refuses a certificate for an http:// URL, on create and on change, sealing nothing", async () => {
    const { endpoints, repos, sealed } = await setup();
    const created = await refused(
      endpoints.create(scope, { url: HTTP, events: EVENTS, clientCertificate: cert() }),
    );
    expect(created).toEqual([{ path: "client_certificate", message: expect.stringContaining("https://") }]);
    expect(sealed).toEqual([]);
    expect((await repos.endpoints.list(scope, {}, { limit: 10, cursor: null })).data).toEqual([]);

    const { endpoint } = await endpoints.create(scope, { url: HTTP, events: EVENTS });
    sealed.length = 0;
    const changed = await refused(endpoints.update(scope, endpoint.id, { clientCertificate: cert() }));
    expect(changed).toEqual([{ path: "client_certificate", message: expect.stringContaining("https://") }]);
    expect(sealed).toEqual([]);
    expect((await repos.endpoints.get(scope, endpoint.id))?.clientCertificate).toBeNull();
  });

  it("refuses moving an endpoint with a certificate to http:// unless the same change removes it", async () => {
    const { endpoints, repos, sealed } = await setup();
    const { endpoint } = await endpoints.create(scope, {
      url: HTTPS,
      events: EVENTS,
      headers: { "X-Team": "blue" },
      clientCertificate: cert(),
    });
    expect(endpoint.clientCertificate?.subject).toBe("CN=alice");
    sealed.length = 0;
    // A header change in the same request would be sealed if the refusal came after it.
    const issues = await refused(
      endpoints.update(scope, endpoint.id, { url: HTTP, headers: { "X-Team": "red" } }),
    );
    expect(issues).toEqual([
      { path: "url", message: expect.stringContaining("client_certificate: null in the same request") },
    ]);
    expect(sealed).toEqual([]);
    const kept = await repos.endpoints.get(scope, endpoint.id);
    expect(kept?.url).toBe(HTTPS);
    expect(kept?.clientCertificate?.subject).toBe("CN=alice");

    const moved = await endpoints.update(scope, endpoint.id, { url: HTTP, clientCertificate: null });
    expect(moved.url).toBe(HTTP);
    expect(moved.clientCertificate).toBeNull();
  });

  it("checks a new endpoint's filter and rate limit before sealing its headers", async () => {
    const { endpoints, sealed } = await setup();
    const issues = await refused(
      endpoints.create(scope, {
        url: HTTPS,
        events: EVENTS,
        headers: { "X-Team": "blue" },
        rateLimit: { count: 0, per: "second" },
      }),
    );
    expect(issues.map((i) => i.path)).toEqual(["rate_limit"]);
    expect(sealed).toEqual([]);
  });
});
