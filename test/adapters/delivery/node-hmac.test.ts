import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { nodeEd25519 } from "../../../src/adapters/delivery/node-ed25519.ts";
import { nodeHmac } from "../../../src/adapters/delivery/node-hmac.ts";
import { keyKind, SIGNATURE_SCHEMES, signedHeaders } from "../../../src/domain/signature-scheme.ts";
import { newEndpointSecret, signatureHeader } from "../../../src/domain/signing.ts";
import { newEd25519Secret } from "../../../src/domain/standard-webhooks-ed25519.ts";

const newSecret = (scheme: (typeof SIGNATURE_SCHEMES)[number]) =>
  keyKind(scheme) === "ed25519"
    ? newEd25519Secret(new Uint8Array(randomBytes(32)))
    : newEndpointSecret(new Uint8Array(randomBytes(32)));

describe("node:crypto HMAC and Ed25519 behind the schemes' one signing function", () => {
  it("gives exactly the Web Crypto headers under every scheme, for one and two secrets and any body", async () => {
    for (const scheme of SIGNATURE_SCHEMES) {
      for (let i = 0; i < 100; i++) {
        const secrets = [newSecret(scheme)];
        if (i % 2) secrets.push(newSecret(scheme));
        const body = JSON.stringify({ i, text: randomBytes(i * 3).toString("latin1"), emoji: "✉️🚀" });
        const input = {
          scheme,
          eventId: `evt_${i.toString(16).padStart(32, "0")}`,
          timestamp: 1_700_000_000 + i,
          body,
          secrets,
        };
        const fast = signedHeaders(input, nodeHmac, nodeEd25519);
        // Synchronous: the undici sender signs without a promise on its hot path.
        expect(Array.isArray(fast)).toBe(true);
        expect(fast).toEqual(await signedHeaders(input));
      }
    }
  });

  it("keeps herald-v1 byte for byte what the domain's signatureHeader gives", async () => {
    const secrets = [newEndpointSecret(new Uint8Array(randomBytes(32)))];
    const input = {
      scheme: "herald-v1" as const,
      eventId: "evt_1",
      timestamp: 1_700_000_000,
      body: "{}",
      secrets,
    };
    expect(signedHeaders(input, nodeHmac, nodeEd25519)[2]).toEqual([
      "X-Webhook-Signature",
      await signatureHeader(secrets, input.timestamp, input.body),
    ]);
  });
});
