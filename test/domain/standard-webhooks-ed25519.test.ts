import { createPublicKey, verify } from "node:crypto";
import { describe, expect, it } from "vitest";
import { fromBase64 } from "../../src/domain/encoding.ts";
import { signedHeaders } from "../../src/domain/signature-scheme.ts";
import { newEndpointSecret } from "../../src/domain/signing.ts";
import {
  ed25519Pkcs8,
  ed25519PublicKey,
  isEd25519Secret,
  newEd25519Secret,
  standardWebhooksEd25519Signature,
  webCryptoEd25519,
} from "../../src/domain/standard-webhooks-ed25519.ts";

const hex = (text: string) => Uint8Array.from(text.match(/../g) ?? [], (h) => Number.parseInt(h, 16));
const random = (fill: number) => new Uint8Array(32).map((_, i) => (fill * 31 + i * 7) % 256);
const KEY = newEd25519Secret(random(1));
const OLD = newEd25519Secret(random(2));
const ID = "evt_0123456789abcdef0123456789abcdef";
const BODY = JSON.stringify({ id: ID, type: "message.delivered", data: { note: "héllo ✓ 🚀" } });

// RFC 8032, section 7.1, TEST 1 and TEST 2: an independent check of key derivation and signing.
const RFC8032 = [
  {
    seed: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
    publicKey: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    message: "",
    signature:
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
  },
  {
    seed: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
    publicKey: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    message: "72",
    signature:
      "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
  },
];

/** Verifies a v1a signature the way a receiver would, with node:crypto and only the public key. */
function receiverVerifies(publicKey: string, signature: string, message: string): boolean {
  const raw = Buffer.from(fromBase64(publicKey.slice("whpk_".length)));
  const key = createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") },
    format: "jwk",
  });
  return verify(null, Buffer.from(message), key, Buffer.from(fromBase64(signature.slice("v1a,".length))));
}

describe("standard-webhooks-ed25519 signing", () => {
  it("keeps the private key as whsk_ed25519_ + base64 PKCS #8, told apart from a whsec_ secret", () => {
    expect(KEY).toMatch(/^whsk_ed25519_[A-Za-z0-9+/]{64}$/);
    expect(isEd25519Secret(KEY)).toBe(true);
    expect(isEd25519Secret(newEndpointSecret(random(1)))).toBe(false);
    expect(ed25519Pkcs8(KEY).subarray(16)).toEqual(random(1));
    expect(() => ed25519Pkcs8("whsk_ed25519_AAAA")).toThrow(/PKCS #8/);
    expect(() => newEd25519Secret(new Uint8Array(31))).toThrow(/32 random bytes/);
  });

  it("derives the public key and signs exactly as RFC 8032's test vectors", async () => {
    for (const v of RFC8032) {
      const secret = newEd25519Secret(hex(v.seed));
      expect(await ed25519PublicKey(secret)).toBe(`whpk_${Buffer.from(hex(v.publicKey)).toString("base64")}`);
      const signature = await webCryptoEd25519(secret, "", hex(v.message));
      expect(Buffer.from(fromBase64(signature)).toString("hex")).toBe(v.signature);
    }
  });

  it("serialises the public key as the specification does: whpk_ + base64 of the 32 raw bytes", async () => {
    const publicKey = await ed25519PublicKey(KEY);
    expect(publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(fromBase64(publicKey.slice(5))).toHaveLength(32);
    expect(await ed25519PublicKey(OLD)).not.toBe(publicKey);
  });

  it("signs v1a, + base64 Ed25519 of id.timestamp.body, which a receiver verifies with the public key only", async () => {
    const ts = 1_700_000_000;
    const header = await standardWebhooksEd25519Signature([KEY], ID, ts, BODY);
    expect(header).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    const message = `${ID}.${ts}.${BODY}`;
    expect(receiverVerifies(await ed25519PublicKey(KEY), header, message)).toBe(true);
    expect(receiverVerifies(await ed25519PublicKey(OLD), header, message)).toBe(false);
    expect(receiverVerifies(await ed25519PublicKey(KEY), header, `${message} `)).toBe(false);
    expect(receiverVerifies(await ed25519PublicKey(KEY), header, `${ID}.${ts + 1}.${BODY}`)).toBe(false);
  });

  it("sends the Standard Webhooks headers with one v1a entry per active key, new first, during a rotation", async () => {
    const ts = 1_700_000_000;
    const pairs = await signedHeaders({
      scheme: "standard-webhooks-ed25519",
      eventId: ID,
      timestamp: ts,
      body: BODY,
      secrets: [KEY, OLD],
    });
    expect(pairs.map(([name]) => name)).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"]);
    const entries = pairs[2]![1].split(" ");
    expect(entries).toHaveLength(2);
    const message = `${ID}.${ts}.${BODY}`;
    expect(receiverVerifies(await ed25519PublicKey(KEY), entries[0]!, message)).toBe(true);
    expect(receiverVerifies(await ed25519PublicKey(OLD), entries[1]!, message)).toBe(true);
  });

  it("signs only with keys of the scheme's kind", async () => {
    const hmac = newEndpointSecret(random(3));
    const input = { eventId: ID, timestamp: 1_700_000_000, body: BODY, secrets: [KEY, hmac] };
    const ed = await signedHeaders({ ...input, scheme: "standard-webhooks-ed25519" });
    expect(ed[2]![1]).toMatch(/^v1a,[^ ]+$/);
    const sw = await signedHeaders({ ...input, scheme: "standard-webhooks" });
    expect(sw[2]![1]).toMatch(/^v1,[^ ]+$/);
    const v1 = await signedHeaders({ ...input, scheme: "herald-v1" });
    expect(v1[2]![1]).toMatch(/^v1=[0-9a-f]{64}$/);
  });
});
