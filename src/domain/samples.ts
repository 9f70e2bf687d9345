import {
  type EventType,
  isOperationalType,
  type OperationalEventType,
  resourceIdField,
} from "./event-catalog.ts";

export interface SampleIds {
  /** A UUID for the subject (message or domain). */
  subjectId: string;
}

const REASONS: Partial<Record<EventType, string>> = {
  "message.deferred": "421 4.7.0 Try again later: recipient server is rate limiting",
  "message.bounced": "550 5.1.1 The email account that you tried to reach does not exist",
  "message.failed": "Sending domain is paused",
  "message.rejected": "Message content was rejected by policy",
  "message.undeliverable": "Retries exhausted after 72 hours",
  "message.expired": "Validity window of 24h ended before delivery",
  "message.cancelled": "Cancelled by the client before submission",
  "message.suppressed": "Recipient is on the suppression list (hard bounce)",
  "message.complained": "Recipient marked the message as spam",
  "message.unsubscribed": "Recipient used the List-Unsubscribe link",
  "domain.verification_failed": "DKIM record no longer matches",
  "domain.sending_paused": "DNS records stayed out of sync after the grace period",
  "domain.verified": "All DNS records match",
};

/**
 * Realistic data for an event type, valid against the catalog's schema: what a test event or
 * `herald events send` publishes. `now` dates the domain grace period.
 */
export function sampleEventData(type: EventType, ids: SampleIds, now: Date): Record<string, unknown> {
  if (isOperationalType(type)) return operationalSample(type, ids, now);
  if (resourceIdField(type) === "domain_id") {
    const status = type.slice("domain.".length);
    const data: Record<string, unknown> = {
      domain_id: ids.subjectId,
      domain: "mail.example.com",
      status,
      reason: REASONS[type],
      dns_records: [
        {
          type: "TXT",
          name: "herald._domainkey.mail.example.com",
          value: "v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC",
          valid: status === "verified",
        },
      ],
    };
    if (status === "verification_failed") {
      data.grace_period_ends_at = new Date(now.getTime() + 72 * 3_600_000).toISOString();
    }
    return data;
  }
  const part = type.slice("message.".length);
  const engagement = ["opened", "clicked", "complained", "unsubscribed"].includes(part);
  const data: Record<string, unknown> = {
    message_id: ids.subjectId,
    status: engagement ? "delivered" : part,
    channel: "email",
    message_type: part === "unsubscribed" || part === "clicked" ? "marketing" : "transactional",
    recipient: "ada.lovelace@example.com",
    metadata: { sample: true },
  };
  const reason = REASONS[type];
  if (reason) data.reason = reason;
  if (part === "clicked") (data.metadata as Record<string, unknown>).url = "https://example.com/welcome";
  return data;
}

/** Data of an operational event about an example endpoint (the subject id is the endpoint's). */
function operationalSample(type: OperationalEventType, ids: SampleIds, now: Date): Record<string, unknown> {
  const endpoint = { endpoint_id: ids.subjectId, url: "https://hooks.example.com/herald" };
  const hourAgo = new Date(now.getTime() - 3_600_000).toISOString();
  switch (type) {
    case "endpoint.disabled":
      return { ...endpoint, disabled_reason: "gone", disabled_at: now.toISOString(), failing_since: hourAgo };
    case "endpoint.failing":
    case "endpoint.recovered":
      return { ...endpoint, failing_since: hourAgo };
    case "delivery.exhausted":
      return {
        ...endpoint,
        event_id: "evt_4f9a0c2e8b7d4e1f9a3c5b7d9e1f3a5c",
        event_type: "message.delivered",
        delivery_id: "0b6f8a52-3c1d-4e7a-9f20-5d8c7b6a4e31",
        attempt: 12,
        attempted_at: now.toISOString(),
        response_status: 503,
        error: "http_status",
      };
  }
}
