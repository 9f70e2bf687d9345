import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { nodeSignatureHeader } from "../../src/adapters/delivery/node-signer.ts";
import { newEndpointSecret, signatureHeader } from "../../src/domain/signing.ts";

describe("node:crypto signer", () => {
  it("produces exactly the domain signer's header, for one and two secrets and any body", async () => {
    for (let i = 0; i < 200; i++) {
      const secrets = [newEndpointSecret(new Uint8Array(randomBytes(32)))];
      if (i % 2) secrets.push(newEndpointSecret(new Uint8Array(randomBytes(32))));
      const body = JSON.stringify({ i, text: randomBytes(i * 3).toString("latin1"), emoji: "✉️🚀" });
      const ts = 1_700_000_000 + i;
      expect(nodeSignatureHeader(secrets, ts, body)).toBe(await signatureHeader(secrets, ts, body));
    }
  });
});
