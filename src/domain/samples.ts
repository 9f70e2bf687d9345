import { type EventType, resourceIdField } from "./event-catalog.ts";

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
