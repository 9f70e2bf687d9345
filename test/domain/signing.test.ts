import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { timingSafeEqual } from "../../src/domain/encoding.ts";
import { newEndpointSecret, sign, signatureHeader, verifySignature } from "../../src/domain/signing.ts";

const secret = newEndpointSecret(new Uint8Array(32).fill(7));
const body = '{"id":"evt_1","type":"message.sent"}';

describe("signing", () => {
  it("issues whsec_ secrets with the base64 of 32 bytes", () => {
    expect(secret).toBe(`whsec_${Buffer.from(new Uint8Array(32).fill(7)).toString("base64")}`);
    expect(() => newEndpointSecret(new Uint8Array(16))).toThrow();
  });

  it("signs v1= + hex HMAC-SHA256 of '<timestamp>.<body>' keyed by the whole secret string", async () => {
    const expected = createHmac("sha256", Buffer.from(secret, "utf8"))
      .update(`1700000000.${body}`)
      .digest("hex");
    expect(await sign(secret, 1700000000, body)).toBe(`v1=${expected}`);
    const bytes = new Uint8Array([0xff, 0x00, 0x7b]);
    const expectedBytes = createHmac("sha256", secret)
      .update(Buffer.concat([Buffer.from("5."), Buffer.from(bytes)]))
      .digest("hex");
    expect(await sign(secret, 5, bytes)).toBe(`v1=${expectedBytes}`);
  });

  it("puts the new signature first and the old one after a space during a rotation", async () => {
    const old = newEndpointSecret(new Uint8Array(32).fill(9));
    const header = await signatureHeader([secret, old], 1700000000, body);
    const [a, b] = header.split(" ");
    expect(a).toBe(await sign(secret, 1700000000, body));
    expect(b).toBe(await sign(old, 1700000000, body));
  });

  it("verifies like the specification's receiver", async () => {
    const ts = 1700000000;
    const sig = await sign(secret, ts, body);
    const ok = { body, timestamp: String(ts), signature: sig, secrets: [secret], nowSeconds: ts + 10 };
    expect(await verifySignature(ok)).toEqual({ ok: true });
    expect(await verifySignature({ ...ok, timestamp: undefined })).toEqual({
      ok: false,
      reason: "missing_timestamp",
    });
    expect(await verifySignature({ ...ok, nowSeconds: ts + 301 })).toEqual({
      ok: false,
      reason: "stale_timestamp",
    });
    expect(await verifySignature({ ...ok, nowSeconds: ts - 301 })).toEqual({
      ok: false,
      reason: "stale_timestamp",
    });
    expect(await verifySignature({ ...ok, nowSeconds: ts + 300 })).toEqual({ ok: true });
    expect(await verifySignature({ ...ok, body: `${body} ` })).toEqual({
      ok: false,
      reason: "signature_mismatch",
    });
    expect(await verifySignature({ ...ok, signature: "v0=abc" })).toEqual({
      ok: false,
      reason: "malformed_header",
    });
    expect(await verifySignature({ ...ok, timestamp: "12x" })).toEqual({
      ok: false,
      reason: "malformed_header",
    });
    const other = newEndpointSecret(new Uint8Array(32).fill(1));
    expect(await verifySignature({ ...ok, secrets: [other] })).toEqual({
      ok: false,
      reason: "signature_mismatch",
    });
    expect(await verifySignature({ ...ok, secrets: [other, secret] })).toEqual({ ok: true });
    const two = `${await sign(other, ts, body)} ${sig}`;
    expect(await verifySignature({ ...ok, signature: two })).toEqual({ ok: true });
  });

  it("compares in constant time but correctly", () => {
    expect(timingSafeEqual("abc", "abc")).toBe(true);
    expect(timingSafeEqual("abc", "abd")).toBe(false);
    expect(timingSafeEqual("abc", "abcd")).toBe(false);
    expect(timingSafeEqual("", "")).toBe(true);
  });
});
