import { describe, expect, it } from "vitest";
import {
  EVENT_DATA_SCHEMAS,
  EVENT_DESCRIPTIONS,
  EVENT_TYPES,
  isEventType,
  isOperationalType,
  MESSAGE_LIFECYCLE_TYPES,
  OPERATIONAL_EVENT_TYPES,
  PUBLISHED_EVENT_TYPES,
  resourceIdField,
} from "../../src/domain/event-catalog.ts";

const MSG = "6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10";
const DOM = "0b7d3c1a-2e4f-4a6b-8c9d-1e2f3a4b5c6d";

const message = (status: string, over: Record<string, unknown> = {}) => ({
  message_id: MSG,
  status,
  channel: "email",
  message_type: "transactional",
  recipient: "ada@example.com",
  ...over,
});

describe("event catalog", () => {
  it("lists the 19 types of the specification and the 4 operational ones, each described and with a schema", () => {
    expect(PUBLISHED_EVENT_TYPES).toHaveLength(19);
    expect(OPERATIONAL_EVENT_TYPES).toEqual([
      "endpoint.disabled",
      "endpoint.failing",
      "endpoint.recovered",
      "delivery.exhausted",
    ]);
    expect(EVENT_TYPES).toEqual([...PUBLISHED_EVENT_TYPES, ...OPERATIONAL_EVENT_TYPES]);
    expect(new Set(EVENT_TYPES).size).toBe(23);
    for (const t of EVENT_TYPES) {
      expect(EVENT_DESCRIPTIONS[t]).toBeTruthy();
      expect(EVENT_DATA_SCHEMAS[t]).toBeDefined();
    }
    expect(MESSAGE_LIFECYCLE_TYPES).toHaveLength(12);
    expect(MESSAGE_LIFECYCLE_TYPES).not.toContain("message.opened");
  });

  it("recognises catalog types only", () => {
    expect(isEventType("message.delivered")).toBe(true);
    expect(isEventType("message.exploded")).toBe(false);
    expect(resourceIdField("domain.verified")).toBe("domain_id");
    expect(resourceIdField("message.sent")).toBe("message_id");
    expect(resourceIdField("endpoint.failing")).toBe("endpoint_id");
    expect(resourceIdField("delivery.exhausted")).toBe("endpoint_id");
    expect(isOperationalType("endpoint.disabled")).toBe(true);
    expect(isOperationalType("message.sent")).toBe(false);
  });

  it("declares the operational events' data, refusing what they do not define", () => {
    const endpoint = { endpoint_id: MSG, url: "https://ops.example.com/alerts" };
    const disabled = EVENT_DATA_SCHEMAS["endpoint.disabled"];
    const at = "2026-11-21T10:00:00.000Z";
    expect(disabled.safeParse({ ...endpoint, disabled_reason: "gone", disabled_at: at }).success).toBe(true);
    expect(disabled.safeParse({ ...endpoint, disabled_reason: "tired", disabled_at: at }).success).toBe(
      false,
    );
    expect(EVENT_DATA_SCHEMAS["endpoint.failing"].safeParse({ ...endpoint }).success).toBe(false);
    expect(
      EVENT_DATA_SCHEMAS["endpoint.recovered"].safeParse({ ...endpoint, failing_since: at }).success,
    ).toBe(true);
    const exhausted = {
      ...endpoint,
      event_id: "evt_4f9a0c2e8b7d4e1f9a3c5b7d9e1f3a5c",
      event_type: "message.sent",
      delivery_id: DOM,
      attempt: 3,
      attempted_at: at,
      response_status: 503,
      error: "http_status",
    };
    expect(EVENT_DATA_SCHEMAS["delivery.exhausted"].safeParse(exhausted).success).toBe(true);
    // Never about the delivery of an operational event, so the schema does not allow one.
    expect(
      EVENT_DATA_SCHEMAS["delivery.exhausted"].safeParse({ ...exhausted, event_type: "endpoint.failing" })
        .success,
    ).toBe(false);
    expect(EVENT_DATA_SCHEMAS["delivery.exhausted"].safeParse({ ...exhausted, extra: 1 }).success).toBe(
      false,
    );
  });

  it("requires a lifecycle event's status to be its type's last part", () => {
    expect(EVENT_DATA_SCHEMAS["message.delivered"].safeParse(message("delivered")).success).toBe(true);
    const wrong = EVENT_DATA_SCHEMAS["message.delivered"].safeParse(message("bounced"));
    expect(wrong.success).toBe(false);
    expect(wrong.error?.issues[0]?.path).toEqual(["status"]);
  });

  it("lets engagement events carry the message's current delivery status", () => {
    expect(EVENT_DATA_SCHEMAS["message.opened"].safeParse(message("delivered")).success).toBe(true);
    expect(EVENT_DATA_SCHEMAS["message.clicked"].safeParse(message("opened")).success).toBe(false);
  });

  it("checks channel, message_type, recipient form and unknown fields", () => {
    const s = EVENT_DATA_SCHEMAS["message.sent"];
    expect(s.safeParse(message("sent", { channel: "fax" })).success).toBe(false);
    expect(s.safeParse(message("sent", { message_type: "bulk" })).success).toBe(false);
    expect(s.safeParse(message("sent", { recipient: "not-an-address" })).success).toBe(false);
    expect(s.safeParse(message("sent", { channel: "sms", recipient: "+15550100" })).success).toBe(true);
    expect(s.safeParse(message("sent", { surprise: 1 })).success).toBe(false);
    expect(s.safeParse(message("sent", { message_id: "nope" })).success).toBe(false);
    expect(s.safeParse(message("sent", { reason: "ok", metadata: { a: 1 } })).success).toBe(true);
  });

  it("validates domain events", () => {
    const ok = {
      domain_id: DOM,
      domain: "mail.example.com",
      status: "verification_failed",
      grace_period_ends_at: "2026-11-24T10:00:00.000Z",
      dns_records: [{ type: "TXT", name: "_dmarc.example.com", value: "v=DMARC1", valid: false }],
    };
    expect(EVENT_DATA_SCHEMAS["domain.verification_failed"].safeParse(ok).success).toBe(true);
    expect(EVENT_DATA_SCHEMAS["domain.verified"].safeParse(ok).success).toBe(false);
    expect(
      EVENT_DATA_SCHEMAS["domain.verification_failed"].safeParse({ ...ok, domain: "not a host" }).success,
    ).toBe(false);
  });
});
