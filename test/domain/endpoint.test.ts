import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  activeSecrets,
  disableEndpoint,
  type Endpoint,
  enableEndpoint,
  rotateSecrets,
} from "../../src/domain/endpoint.ts";
import { endpointUrlIssues } from "../../src/domain/endpoint-url.ts";
import { firstDeliveryId, nextDeliveryId, UUID_PATTERN } from "../../src/domain/ids.ts";

const t0 = new Date("2026-11-21T10:00:00Z");
const endpoint: Endpoint = {
  id: "e1",
  tenantId: "t",
  projectId: "p",
  url: "https://example.com/hook",
  events: ["message.sent"],
  description: null,
  enabled: true,
  disabledReason: null,
  secrets: [{ sealed: "s1", expiresAt: null }],
  createdAt: t0,
  updatedAt: t0,
  rateLimit: null,
  ordering: "none",
  clientCertificate: null,
  destination: null,
  failingSince: null,
  failingNotice: null,
  disabledAt: null,
  disabledNotice: null,
  headers: [],
  signatureScheme: "herald-v1",
  filter: null,
};

describe("endpoint state", () => {
  it("disables with a reason and enables clearing reason and failure streak", () => {
    const off = disableEndpoint({ ...endpoint, failingSince: t0 }, "gone", t0);
    expect(off).toMatchObject({ enabled: false, disabledReason: "gone" });
    const on = enableEndpoint(off, new Date(t0.getTime() + 1000));
    expect(on).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
    expect(enableEndpoint(on, t0).enabled).toBe(true);
  });

  it("rotates: without grace the old secret goes at once; with grace both sign until it ends", () => {
    expect(rotateSecrets(endpoint.secrets, "s2", 0, t0)).toEqual([{ sealed: "s2", expiresAt: null }]);
    const rotated = rotateSecrets(endpoint.secrets, "s2", 60_000, t0);
    expect(rotated).toEqual([
      { sealed: "s2", expiresAt: null },
      { sealed: "s1", expiresAt: new Date(t0.getTime() + 60_000) },
    ]);
    expect(activeSecrets(rotated, new Date(t0.getTime() + 59_999)).map((s) => s.sealed)).toEqual([
      "s2",
      "s1",
    ]);
    expect(activeSecrets(rotated, new Date(t0.getTime() + 60_000)).map((s) => s.sealed)).toEqual(["s2"]);
  });
});

describe("delivery state", () => {
  it("derives stable delivery ids so repeated steps do not duplicate records", () => {
    const a = firstDeliveryId("evt_1", "w1");
    expect(a).toMatch(UUID_PATTERN);
    expect(firstDeliveryId("evt_1", "w1")).toBe(a);
    expect(firstDeliveryId("evt_1", "w2")).not.toBe(a);
    expect(nextDeliveryId(a)).not.toBe(a);
    expect(nextDeliveryId(a)).toBe(nextDeliveryId(a));
  });

  it("keeps the derivation fixed: a version-8 UUID from the first 128 bits of SHA-256 of the name", () => {
    // A process upgraded mid-fan-out must derive the ids its predecessor wrote, or it would duplicate them.
    const expected = (name: string) => {
      const b = createHash("sha256").update(name, "utf8").digest().subarray(0, 16);
      b[6] = (b[6]! & 0x0f) | 0x80;
      b[8] = (b[8]! & 0x3f) | 0x80;
      const h = b.toString("hex");
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    };
    expect(firstDeliveryId("evt_1", "w1")).toBe(expected("delivery/evt_1/w1/1"));
    expect(nextDeliveryId("abc")).toBe(expected("delivery/next/abc"));
    // Pinned once, so a change to the hashing itself shows too.
    expect(firstDeliveryId("evt_1", "w1")).toBe("1cf6d6e8-220f-8ed8-8242-fd5641705899");
  });
});

describe("endpoint URLs", () => {
  const https = { allowHttp: false, allowPrivateNetworks: false };
  it("accepts absolute https URLs", () => {
    expect(endpointUrlIssues("https://hooks.example.com/herald?x=1", https)).toEqual([]);
  });
  it("refuses http (unless allowed), credentials, relative, fragments and overlong URLs", () => {
    expect(endpointUrlIssues("http://example.com", https)[0]?.message).toMatch(/https/);
    expect(endpointUrlIssues("http://example.com", { ...https, allowHttp: true })).toEqual([]);
    expect(endpointUrlIssues("https://user:pw@example.com", https)[0]?.message).toMatch(
      /user name or password/,
    );
    expect(endpointUrlIssues("/hook", https)[0]?.message).toMatch(/absolute/);
    expect(endpointUrlIssues("https://example.com/#x", https)[0]?.message).toMatch(/fragment/);
    expect(endpointUrlIssues(`https://example.com/${"a".repeat(2048)}`, https)[0]?.message).toMatch(/2048/);
    expect(endpointUrlIssues("ftp://example.com", https)).toHaveLength(1);
  });
});
