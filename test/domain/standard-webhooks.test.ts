import { createHmac } from "node:crypto";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { signedHeaders } from "../../src/domain/signature-scheme.ts";
import { newEndpointSecret } from "../../src/domain/signing.ts";
import { standardWebhooksKey, standardWebhooksSignature } from "../../src/domain/standard-webhooks.ts";

// The specification's own TypeScript library (standardwebhooks on npm) is the judge here, not ours.
const random = (fill: number) => new Uint8Array(32).map((_, i) => (fill * 31 + i * 7) % 256);
const SECRET = newEndpointSecret(random(1));
const OLD = newEndpointSecret(random(2));
const ID = "evt_0123456789abcdef0123456789abcdef";
const BODY = JSON.stringify({ id: ID, type: "message.delivered", data: { note: "héllo ✓ 🚀" } });

const headersOf = (pairs: [string, string][]) => Object.fromEntries(pairs);

describe("standard-webhooks signing", () => {
  it("keys with the base64-decoded part after whsec_: Herald's 32 random bytes", () => {
    expect(standardWebhooksKey(SECRET).bytes).toEqual(random(1));
    expect(() => standardWebhooksKey("whsec_not base64!")).toThrow(/base64/);
  });

  it("signs v1, + base64 HMAC-SHA256 of id.timestamp.body exactly as the specification's library does", async () => {
    const ts = 1_700_000_000;
    const ours = await standardWebhooksSignature([SECRET], ID, ts, BODY);
    expect(ours).toBe(new Webhook(SECRET).sign(ID, new Date(ts * 1000), BODY));
    const mac = createHmac("sha256", Buffer.from(random(1)))
      .update(`${ID}.${ts}.${BODY}`)
      .digest("base64");
    expect(ours).toBe(`v1,${mac}`);
  });

  it("sends webhook-id, webhook-timestamp and webhook-signature that the library verifies", async () => {
    const ts = Math.floor(Date.now() / 1000);
    const pairs = await signedHeaders({
      scheme: "standard-webhooks",
      eventId: ID,
      timestamp: ts,
      body: BODY,
      secrets: [SECRET],
    });
    expect(pairs.map(([name]) => name)).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"]);
    expect(pairs[0]![1]).toBe(ID);
    expect(pairs[1]![1]).toBe(String(ts));
    expect(new Webhook(SECRET).verify(BODY, headersOf(pairs))).toEqual(JSON.parse(BODY));
    expect(() => new Webhook(OLD).verify(BODY, headersOf(pairs))).toThrow(WebhookVerificationError);
    expect(() => new Webhook(SECRET).verify(`${BODY} `, headersOf(pairs))).toThrow(WebhookVerificationError);
  });

  it("carries two space-separated signatures during a rotation, each verifying with its own secret", async () => {
    const ts = Math.floor(Date.now() / 1000);
    const pairs = await signedHeaders({
      scheme: "standard-webhooks",
      eventId: ID,
      timestamp: ts,
      body: BODY,
      secrets: [SECRET, OLD],
    });
    const signature = pairs[2]![1];
    expect(signature.split(" ")).toHaveLength(2);
    expect(signature).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(SECRET).verify(BODY, headersOf(pairs))).toEqual(JSON.parse(BODY));
    expect(new Webhook(OLD).verify(BODY, headersOf(pairs))).toEqual(JSON.parse(BODY));
  });

  it("leaves herald-v1 as the seed defines it: X-Webhook-* and v1= hex keyed by the whole secret string", async () => {
    const ts = 1_700_000_000;
    const pairs = await signedHeaders({
      scheme: "herald-v1",
      eventId: ID,
      timestamp: ts,
      body: BODY,
      secrets: [SECRET],
    });
    const hex = createHmac("sha256", Buffer.from(SECRET, "utf8")).update(`${ts}.${BODY}`).digest("hex");
    expect(pairs).toEqual([
      ["X-Webhook-Id", ID],
      ["X-Webhook-Timestamp", String(ts)],
      ["X-Webhook-Signature", `v1=${hex}`],
    ]);
  });
});
