import { describe, expect, it } from "vitest";
import { nodeEd25519 } from "../../../src/adapters/delivery/node-ed25519.ts";
import { nodeHmac } from "../../../src/adapters/delivery/node-hmac.ts";
import { deliveryHeaders } from "../../../src/adapters/delivery/outcome.ts";
import { brokerMessageHeaders } from "../../../src/adapters/destinations/message-headers.ts";
import type { BrokerDeliveryRequest, DeliveryRequest } from "../../../src/app/ports/sending.ts";
import { newEd25519Secret } from "../../../src/domain/standard-webhooks-ed25519.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8MVDX+wqmh8=";
const base: DeliveryRequest = {
  url: "https://example.test/hook",
  body: '{"id":"evt_1","n":"é"}',
  eventId: "evt_1",
  secrets: [SECRET],
  timestamp: 1_764_331_200,
  scheme: "herald-v1",
  headers: [["X-Tenant", "acme"]],
};

describe("brokerMessageHeaders", () => {
  it("carries the scheme's signed headers, then traceparent, then the custom headers, as the HTTPS sender signs them", async () => {
    const req = { ...base, traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" };
    const pairs = await brokerMessageHeaders(req as unknown as BrokerDeliveryRequest);
    expect(pairs.map(([n]) => n)).toEqual([
      "X-Webhook-Id",
      "X-Webhook-Timestamp",
      "X-Webhook-Signature",
      "traceparent",
      "X-Tenant",
    ]);
    // The same values an HTTPS endpoint gets, less Content-Type and User-Agent.
    const https = await deliveryHeaders(req, "Herald/test");
    const { "Content-Type": _type, "User-Agent": _agent, ...rest } = https;
    expect(Object.fromEntries(pairs)).toEqual(rest);
  });

  it("names them webhook-* in Standard Webhooks mode and adds no traceparent when tracing is off", async () => {
    const pairs = await brokerMessageHeaders({
      ...base,
      scheme: "standard-webhooks",
      headers: [],
    } as unknown as BrokerDeliveryRequest);
    expect(pairs.map(([n]) => n)).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"]);
    expect(pairs[2]?.[1]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it("gives the same headers signed by node:crypto (what the broker senders use on Node) as by Web Crypto", async () => {
    const ed = newEd25519Secret(new Uint8Array(32).map((_, i) => i + 1));
    for (const [scheme, secrets] of [
      ["herald-v1", [SECRET]],
      ["standard-webhooks", [SECRET, "whsec_b3RoZXIgc2VjcmV0IG9mIDMyIGJ5dGVzIGxvbmcgISE="]],
      ["standard-webhooks-ed25519", [ed]],
    ] as const) {
      const req = { ...base, scheme, secrets: [...secrets] } as unknown as BrokerDeliveryRequest;
      const fast = await brokerMessageHeaders(req, nodeHmac, nodeEd25519);
      expect(fast).toEqual(await brokerMessageHeaders(req));
      expect(fast[2]?.[1]).toMatch(scheme === "herald-v1" ? /^v1=[0-9a-f]{64}$/ : /^v1a?,/);
    }
  });
});
