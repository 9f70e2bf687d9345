import { describe, expect, it } from "vitest";
import { deliveryHeaders } from "../../../src/adapters/delivery/outcome.ts";
import { brokerMessageHeaders } from "../../../src/adapters/destinations/message-headers.ts";
import type { BrokerDeliveryRequest, DeliveryRequest } from "../../../src/app/ports/sending.ts";

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
});
