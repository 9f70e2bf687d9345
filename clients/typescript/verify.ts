/**
 * Receiver-side verification of Herald webhook deliveries.
 *
 * Standalone on purpose: Web Crypto, TextEncoder and TextDecoder only, no imports, so the same file
 * runs in Node 20+, Bun, Deno, browsers and edge workers. The shared vectors in
 * `clients/test-vectors.json` pin its behaviour to the Python and Go libraries.
 */

/** Header carrying the unix time (seconds, decimal) at which Herald signed the delivery. */
export const TIMESTAMP_HEADER = "x-webhook-timestamp";
/** Header carrying one or more `v1=<hex>` signatures separated by whitespace (newest secret first). */
export const SIGNATURE_HEADER = "x-webhook-signature";
/** Header carrying the event id (herald-v1); unsigned, so deduplicate on the verified envelope's `id` instead. */
export const ID_HEADER = "x-webhook-id";
/** How far, in seconds, the signing time may lie from the receiver's clock, in the past or the future. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** The headers of an endpoint in `standard-webhooks` mode (the Standard Webhooks specification's names). */
export const STANDARD_WEBHOOKS_HEADERS = {
  id: "webhook-id",
  timestamp: "webhook-timestamp",
  signature: "webhook-signature",
} as const;

/**
 * How the endpoint signs: `herald-v1` (X-Webhook-*, `v1=` + hex HMAC of `<timestamp>.<body>` keyed
 * with the whole secret string), `standard-webhooks` (webhook-*, `v1,` + base64 HMAC of
 * `<id>.<timestamp>.<body>` keyed with the base64-decoded part after `whsec_`) or
 * `standard-webhooks-ed25519` (webhook-*, `v1a,` + base64 Ed25519 signature of the same, verified
 * with the endpoint's public key `whpk_…`).
 */
export type SignatureScheme = "herald-v1" | "standard-webhooks" | "standard-webhooks-ed25519";

const SCHEMES: readonly SignatureScheme[] = ["herald-v1", "standard-webhooks", "standard-webhooks-ed25519"];

/**
 * The event envelope Herald posts (specification: Event envelope), untyped: every HeraldEnvelope is
 * one. Unknown extra fields are kept.
 */
export interface Envelope {
  id: string;
  type: string;
  version: string;
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: Record<string, unknown>;
}

// The typed envelope of each event type, generated from the OpenAPI document (in this file, so it
// stays one file with no imports). verifyWebhook returns a HeraldEnvelope: narrow it on `type`.
// <generated: event types, from openapi/openapi.json by `npm run openapi`; do not edit>
/** An object nested in event data (DnsRecord). */
export type DnsRecord = {
  type: string;
  name: string;
  value: string;
  valid?: boolean;
};
/** The data of message.accepted: The provider took the message. */
export type MessageAcceptedData = {
  message_id: string;
  status: "accepted";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.accepted. */
export type MessageAcceptedEvent = {
  id: string;
  type: "message.accepted";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageAcceptedData;
};
/** The data of message.sent: Handed off to the destination. */
export type MessageSentData = {
  message_id: string;
  status: "sent";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.sent. */
export type MessageSentEvent = {
  id: string;
  type: "message.sent";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageSentData;
};
/** The data of message.delivered: Confirmed delivered. */
export type MessageDeliveredData = {
  message_id: string;
  status: "delivered";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.delivered. */
export type MessageDeliveredEvent = {
  id: string;
  type: "message.delivered";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageDeliveredData;
};
/** The data of message.partially_delivered: Delivered to only part of the recipients. */
export type MessagePartiallyDeliveredData = {
  message_id: string;
  status: "partially_delivered";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.partially_delivered. */
export type MessagePartiallyDeliveredEvent = {
  id: string;
  type: "message.partially_delivered";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessagePartiallyDeliveredData;
};
/** The data of message.deferred: Temporarily postponed; still in flight. */
export type MessageDeferredData = {
  message_id: string;
  status: "deferred";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.deferred. */
export type MessageDeferredEvent = {
  id: string;
  type: "message.deferred";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageDeferredData;
};
/** The data of message.bounced: Permanently rejected by the recipient server. */
export type MessageBouncedData = {
  message_id: string;
  status: "bounced";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.bounced. */
export type MessageBouncedEvent = {
  id: string;
  type: "message.bounced";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageBouncedData;
};
/** The data of message.failed: Could not be sent. */
export type MessageFailedData = {
  message_id: string;
  status: "failed";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.failed. */
export type MessageFailedEvent = {
  id: string;
  type: "message.failed";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageFailedData;
};
/** The data of message.rejected: Could not be sent. */
export type MessageRejectedData = {
  message_id: string;
  status: "rejected";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.rejected. */
export type MessageRejectedEvent = {
  id: string;
  type: "message.rejected";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageRejectedData;
};
/** The data of message.undeliverable: Accepted but could not be delivered; terminal. */
export type MessageUndeliverableData = {
  message_id: string;
  status: "undeliverable";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.undeliverable. */
export type MessageUndeliverableEvent = {
  id: string;
  type: "message.undeliverable";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageUndeliverableData;
};
/** The data of message.expired: The validity window ran out before delivery. */
export type MessageExpiredData = {
  message_id: string;
  status: "expired";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.expired. */
export type MessageExpiredEvent = {
  id: string;
  type: "message.expired";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageExpiredData;
};
/** The data of message.cancelled: Cancelled by the client before submission. */
export type MessageCancelledData = {
  message_id: string;
  status: "cancelled";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.cancelled. */
export type MessageCancelledEvent = {
  id: string;
  type: "message.cancelled";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageCancelledData;
};
/** The data of message.suppressed: Recipient was on the suppression list; nothing was sent. */
export type MessageSuppressedData = {
  message_id: string;
  status: "suppressed";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.suppressed. */
export type MessageSuppressedEvent = {
  id: string;
  type: "message.suppressed";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageSuppressedData;
};
/** The data of message.opened: Engagement; does not change delivery status. */
export type MessageOpenedData = {
  message_id: string;
  status:
    | "accepted"
    | "sent"
    | "delivered"
    | "partially_delivered"
    | "deferred"
    | "bounced"
    | "failed"
    | "rejected"
    | "undeliverable"
    | "expired"
    | "cancelled"
    | "suppressed";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.opened. */
export type MessageOpenedEvent = {
  id: string;
  type: "message.opened";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageOpenedData;
};
/** The data of message.clicked: Engagement; does not change delivery status. */
export type MessageClickedData = {
  message_id: string;
  status:
    | "accepted"
    | "sent"
    | "delivered"
    | "partially_delivered"
    | "deferred"
    | "bounced"
    | "failed"
    | "rejected"
    | "undeliverable"
    | "expired"
    | "cancelled"
    | "suppressed";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.clicked. */
export type MessageClickedEvent = {
  id: string;
  type: "message.clicked";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageClickedData;
};
/** The data of message.complained: Marked as spam; to be treated as a hard signal. */
export type MessageComplainedData = {
  message_id: string;
  status:
    | "accepted"
    | "sent"
    | "delivered"
    | "partially_delivered"
    | "deferred"
    | "bounced"
    | "failed"
    | "rejected"
    | "undeliverable"
    | "expired"
    | "cancelled"
    | "suppressed";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.complained. */
export type MessageComplainedEvent = {
  id: string;
  type: "message.complained";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageComplainedData;
};
/** The data of message.unsubscribed: Recipient opted out; suppressed automatically from then on. */
export type MessageUnsubscribedData = {
  message_id: string;
  status:
    | "accepted"
    | "sent"
    | "delivered"
    | "partially_delivered"
    | "deferred"
    | "bounced"
    | "failed"
    | "rejected"
    | "undeliverable"
    | "expired"
    | "cancelled"
    | "suppressed";
  channel: "email" | "sms" | "push" | "webhook";
  message_type: "transactional" | "marketing";
  recipient: string;
  reason?: string;
  metadata?: Record<string, unknown>;
};
/** The envelope of message.unsubscribed. */
export type MessageUnsubscribedEvent = {
  id: string;
  type: "message.unsubscribed";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: MessageUnsubscribedData;
};
/** The data of domain.verification_failed: A sending domain's DNS changed; it entered a grace period before sending is paused. */
export type DomainVerificationFailedData = {
  domain_id: string;
  domain: string;
  status: "verification_failed";
  grace_period_ends_at?: string;
  reason?: string;
  dns_records?: DnsRecord[];
};
/** The envelope of domain.verification_failed. */
export type DomainVerificationFailedEvent = {
  id: string;
  type: "domain.verification_failed";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: DomainVerificationFailedData;
};
/** The data of domain.sending_paused: A sending domain was paused after its DNS stayed out of sync. */
export type DomainSendingPausedData = {
  domain_id: string;
  domain: string;
  status: "sending_paused";
  grace_period_ends_at?: string;
  reason?: string;
  dns_records?: DnsRecord[];
};
/** The envelope of domain.sending_paused. */
export type DomainSendingPausedEvent = {
  id: string;
  type: "domain.sending_paused";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: DomainSendingPausedData;
};
/** The data of domain.verified: A sending domain passed verification again; sending resumed. */
export type DomainVerifiedData = {
  domain_id: string;
  domain: string;
  status: "verified";
  grace_period_ends_at?: string;
  reason?: string;
  dns_records?: DnsRecord[];
};
/** The envelope of domain.verified. */
export type DomainVerifiedEvent = {
  id: string;
  type: "domain.verified";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: DomainVerifiedData;
};
/** The data of endpoint.disabled: Operational, emitted by Herald: an endpoint of the project was disabled (`disabled_reason`: `gone` after a 410, `failing` after failing without success for HERALD_DISABLE_AFTER, `manual`); nothing is sent to it until it is enabled. */
export type EndpointDisabledData = {
  endpoint_id: string;
  url: string;
  description?: string;
  disabled_reason: "manual" | "failing" | "gone";
  disabled_at: string;
  failing_since?: string;
};
/** The envelope of endpoint.disabled. */
export type EndpointDisabledEvent = {
  id: string;
  type: "endpoint.disabled";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: EndpointDisabledData;
};
/** The data of endpoint.failing: Operational, emitted by Herald: an endpoint of the project has failed without a single success for HERALD_FAILING_AFTER (1 hour by default); once per failure streak. */
export type EndpointFailingData = {
  endpoint_id: string;
  url: string;
  description?: string;
  failing_since: string;
};
/** The envelope of endpoint.failing. */
export type EndpointFailingEvent = {
  id: string;
  type: "endpoint.failing";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: EndpointFailingData;
};
/** The data of endpoint.recovered: Operational, emitted by Herald: the first success of an endpoint after a failure streak that was reported by `endpoint.failing`. */
export type EndpointRecoveredData = {
  endpoint_id: string;
  url: string;
  description?: string;
  failing_since: string;
};
/** The envelope of endpoint.recovered. */
export type EndpointRecoveredEvent = {
  id: string;
  type: "endpoint.recovered";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: EndpointRecoveredData;
};
/** The data of delivery.exhausted: Operational, emitted by Herald: the last automatic attempt of an event to an endpoint failed; Herald gives the event up for that endpoint (it can still be retried by hand). */
export type DeliveryExhaustedData = {
  endpoint_id: string;
  url: string;
  description?: string;
  event_id: string;
  event_type:
    | "message.accepted"
    | "message.sent"
    | "message.delivered"
    | "message.partially_delivered"
    | "message.deferred"
    | "message.bounced"
    | "message.failed"
    | "message.rejected"
    | "message.undeliverable"
    | "message.expired"
    | "message.cancelled"
    | "message.suppressed"
    | "message.opened"
    | "message.clicked"
    | "message.complained"
    | "message.unsubscribed"
    | "domain.verification_failed"
    | "domain.sending_paused"
    | "domain.verified";
  delivery_id: string;
  attempt: number;
  attempted_at: string;
  response_status?: number;
  error?:
    | "timeout"
    | "connection_error"
    | "dns_error"
    | "tls_error"
    | "blocked_address"
    | "http_status"
    | "redirect"
    | "auth_error"
    | "destination_not_found"
    | "unroutable"
    | "broker_rejected"
    | "message_too_large";
};
/** The envelope of delivery.exhausted. */
export type DeliveryExhaustedEvent = {
  id: string;
  type: "delivery.exhausted";
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: DeliveryExhaustedData;
};
/** Every envelope Herald posts, discriminated by `type`: narrow on it to get the type's `data`. */
export type HeraldEnvelope =
  | MessageAcceptedEvent
  | MessageSentEvent
  | MessageDeliveredEvent
  | MessagePartiallyDeliveredEvent
  | MessageDeferredEvent
  | MessageBouncedEvent
  | MessageFailedEvent
  | MessageRejectedEvent
  | MessageUndeliverableEvent
  | MessageExpiredEvent
  | MessageCancelledEvent
  | MessageSuppressedEvent
  | MessageOpenedEvent
  | MessageClickedEvent
  | MessageComplainedEvent
  | MessageUnsubscribedEvent
  | DomainVerificationFailedEvent
  | DomainSendingPausedEvent
  | DomainVerifiedEvent
  | EndpointDisabledEvent
  | EndpointFailingEvent
  | EndpointRecoveredEvent
  | DeliveryExhaustedEvent;
/** The event types of the catalog. */
export type HeraldEventType = HeraldEnvelope["type"];
// </generated: event types>

/** The stable machine-readable reason of a failed verification; the same strings as in Python and Go. */
export type WebhookVerificationErrorCode =
  | "missing_timestamp"
  | "timestamp_out_of_tolerance"
  | "malformed_header"
  | "signature_mismatch"
  | "invalid_payload";

/** Base class of every verification failure; switch on `code`, or use `instanceof` on a subclass. */
export abstract class WebhookVerificationError extends Error {
  /** Stable reason, safe to log and to branch on. */
  abstract readonly code: WebhookVerificationErrorCode;
}

/** The X-Webhook-Timestamp header is absent or blank. */
export class MissingTimestampError extends WebhookVerificationError {
  override readonly code = "missing_timestamp" as const;
  override readonly name = "MissingTimestampError";
}

/** The signing time is further from now than the tolerance allows (a replay, or a skewed clock). */
export class TimestampOutOfToleranceError extends WebhookVerificationError {
  override readonly code = "timestamp_out_of_tolerance" as const;
  override readonly name = "TimestampOutOfToleranceError";
}

/**
 * A header is present but unusable: non-numeric timestamp, an entry that is not `v1=<64 hex>` (or
 * under Standard Webhooks a `v1,`/`v1a,` entry of the wrong form), or empty.
 */
export class MalformedHeaderError extends WebhookVerificationError {
  override readonly code = "malformed_header" as const;
  override readonly name = "MalformedHeaderError";
}

/** No signature in the header matches the body under any of the given secrets (or public keys). */
export class SignatureMismatchError extends WebhookVerificationError {
  override readonly code = "signature_mismatch" as const;
  override readonly name = "SignatureMismatchError";
}

/** The signature is valid but the body is not UTF-8 JSON holding an envelope object. */
export class InvalidPayloadError extends WebhookVerificationError {
  override readonly code = "invalid_payload" as const;
  override readonly name = "InvalidPayloadError";
}

/** Request headers as fetch `Headers`, Node's `IncomingHttpHeaders`, a plain object or a Map; names match in any case. */
export type WebhookHeaders =
  | Headers
  | ReadonlyMap<string, string | readonly string[] | undefined>
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** What {@link verifyWebhook} needs; `body` must be the raw bytes as received, never re-serialised JSON. */
export interface VerifyWebhookOptions {
  /** The raw request body. A string is taken as its UTF-8 bytes; prefer bytes. */
  body: ArrayBuffer | ArrayBufferView | string;
  headers: WebhookHeaders;
  /**
   * The endpoint secret (`whsec_...`, exactly as handed out), or several while rotating. Required for
   * `herald-v1` and `standard-webhooks`; not used by `standard-webhooks-ed25519`.
   */
  secrets?: string | readonly string[];
  /**
   * The endpoint's public key (`whpk_...`, its `public_key`), or several while rotating. Required for
   * `standard-webhooks-ed25519`, the only scheme that uses it.
   */
  publicKeys?: string | readonly string[];
  /** Allowed distance between the signing time and now, in seconds; default 300. */
  toleranceSeconds?: number;
  /** The receiver's current time; default the system clock. For tests. */
  now?: Date;
  /** The endpoint's `signature_scheme`; default `herald-v1`. */
  scheme?: SignatureScheme;
}

const encoder = new TextEncoder();
const SIGNATURE_ENTRY = /^v1=[0-9a-f]{64}$/;
/** A Standard Webhooks entry: `<version>,<signature>`; a v1 signature is the base64 of 32 bytes. */
const STANDARD_ENTRY = /^([^,\s]+),(\S*)$/;
const STANDARD_V1 = /^[A-Za-z0-9+/]{43}=$/;
/** A v1a (Ed25519) signature is the base64 of 64 bytes. */
const STANDARD_V1A = /^[A-Za-z0-9+/]{86}==$/;
const TIMESTAMP = /^[0-9]{1,12}$/;

/**
 * Verifies a delivery and returns its envelope: timestamp present, numeric and within tolerance,
 * then any signature matching any secret (constant-time) or public key, then the body parsed as a
 * JSON envelope. Throws a {@link WebhookVerificationError} subclass on failure, a TypeError/RangeError
 * on bad options.
 */
export async function verifyWebhook(options: VerifyWebhookOptions): Promise<HeraldEnvelope> {
  const scheme = options.scheme ?? "herald-v1";
  if (!SCHEMES.includes(scheme)) {
    throw new TypeError(`scheme must be one of ${SCHEMES.map((x) => `"${x}"`).join(", ")}`);
  }
  const asymmetric = scheme === "standard-webhooks-ed25519";
  const secrets = asymmetric ? [] : keyList(options.secrets, "secrets", "secret");
  const publicKeys = asymmetric
    ? await Promise.all(keyList(options.publicKeys, "publicKeys", "public key").map(ed25519PublicKey))
    : [];
  const keys =
    scheme === "standard-webhooks" ? secrets.map(standardWebhooksKey) : secrets.map((s) => encoder.encode(s));
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new RangeError("toleranceSeconds must be a finite number >= 0");
  }
  const nowMs = (options.now ?? new Date()).getTime();
  if (Number.isNaN(nowMs)) throw new RangeError("now is an invalid Date");
  const body = bodyBytes(options.body);
  const names =
    scheme !== "herald-v1"
      ? { timestamp: "webhook-timestamp", signature: "webhook-signature" }
      : { timestamp: "X-Webhook-Timestamp", signature: "X-Webhook-Signature" };

  const timestamps = headerValues(options.headers, names.timestamp.toLowerCase());
  if (timestamps.length > 1) throw new MalformedHeaderError(`${names.timestamp} appears more than once`);
  const timestamp = trimWhitespace(timestamps[0] ?? "");
  if (timestamp === "") throw new MissingTimestampError(`${names.timestamp} is missing`);
  if (!TIMESTAMP.test(timestamp)) {
    throw new MalformedHeaderError(`${names.timestamp} is not unix seconds in decimal digits`);
  }
  if (Math.abs(Math.floor(nowMs / 1000) - Number(timestamp)) > tolerance) {
    throw new TimestampOutOfToleranceError(
      `${names.timestamp} is more than ${tolerance} seconds away from the current time`,
    );
  }

  let prefix: string;
  let received: Uint8Array[];
  if (scheme !== "herald-v1") {
    const ids = headerValues(options.headers, STANDARD_WEBHOOKS_HEADERS.id);
    if (ids.length > 1) throw new MalformedHeaderError("webhook-id appears more than once");
    const id = trimWhitespace(ids[0] ?? "");
    if (id === "") throw new MalformedHeaderError("webhook-id is missing");
    // fetch's Headers joins a repeated header with ", ": an id never holds a comma or a space.
    if (!/^[^\s,]+$/.test(id)) throw new MalformedHeaderError("webhook-id is not one id");
    received = standardEntries(
      headerValues(options.headers, STANDARD_WEBHOOKS_HEADERS.signature),
      asymmetric ? "v1a" : "v1",
    );
    prefix = `${id}.${timestamp}.`;
  } else {
    received = signatureEntries(headerValues(options.headers, SIGNATURE_HEADER));
    prefix = `${timestamp}.`;
  }
  const message = concat(encoder.encode(prefix), body);
  let matched = false;
  // A public key holds nothing to leak, so each check may answer in its own time.
  for (const key of publicKeys) {
    for (const entry of received) {
      matched =
        (await crypto.subtle.verify({ name: "Ed25519" }, key, new Uint8Array(entry), message)) || matched;
    }
  }
  for (const key of keys) {
    const expected = await hmacSha256(key, message);
    // Every comparison runs, so timing reveals neither which secret nor which entry matched.
    for (const entry of received) matched = constantTimeEqual(expected, entry) || matched;
  }
  if (!matched) {
    throw new SignatureMismatchError(
      `no signature matches the body under the given ${asymmetric ? "public keys" : "secrets"}`,
    );
  }

  return parseEnvelope(body);
}

/** The Standard Webhooks key of a secret: the base64 after an optional `whsec_`, as the specification's libraries read it. */
function standardWebhooksKey(secret: string): Uint8Array {
  const encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  let bytes: Uint8Array | null = null;
  if (/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) && encoded.length % 4 === 0) {
    try {
      bytes = Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
    } catch {
      bytes = null;
    }
  }
  if (!bytes || bytes.length === 0) {
    throw new TypeError("a standard-webhooks secret must be whsec_ followed by base64");
  }
  return bytes;
}

/**
 * An Ed25519 public key as Standard Webhooks serialises it: base64 of the 32 raw bytes after an
 * optional `whpk_`.
 */
function ed25519PublicKey(publicKey: string): Promise<CryptoKey> {
  const encoded = publicKey.startsWith("whpk_") ? publicKey.slice("whpk_".length) : publicKey;
  if (!/^[A-Za-z0-9+/]{43}=$/.test(encoded)) {
    throw new TypeError("a public key must be whpk_ followed by the base64 of 32 bytes");
  }
  const raw = Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
  return crypto.subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
}

/**
 * The signatures of one version (`v1`: HMAC, `v1a`: Ed25519) in a webhook-signature header. Entries
 * of another version are skipped, as the specification asks; a header with none of this version can
 * match nothing.
 */
function standardEntries(values: string[], version: "v1" | "v1a"): Uint8Array[] {
  if (values.length > 1) throw new MalformedHeaderError("webhook-signature appears more than once");
  const text = trimWhitespace(values[0] ?? "");
  if (text === "") throw new MalformedHeaderError("webhook-signature is missing or empty");
  const out: Uint8Array[] = [];
  for (const entry of text.split(/[ \t]+/)) {
    const m = STANDARD_ENTRY.exec(entry);
    if (!m)
      throw new MalformedHeaderError("webhook-signature holds an entry that is not <version>,<signature>");
    if (m[1] !== version) continue;
    if (!(version === "v1" ? STANDARD_V1 : STANDARD_V1A).test(m[2]!)) {
      throw new MalformedHeaderError(
        `webhook-signature holds a ${version} entry that is not base64 of ${version === "v1" ? 32 : 64} bytes`,
      );
    }
    out.push(Uint8Array.from(atob(m[2]!), (c) => c.charCodeAt(0)));
  }
  return out;
}

function keyList(
  keys: string | readonly string[] | undefined,
  option: string,
  what: string,
): readonly string[] {
  const list = typeof keys === "string" ? [keys] : keys;
  if (!Array.isArray(list) || list.length === 0)
    throw new TypeError(`${option} must name at least one ${what}`);
  for (const s of list) {
    if (typeof s !== "string" || s === "") throw new TypeError(`every ${what} must be a non-empty string`);
  }
  return list;
}

function bodyBytes(body: ArrayBuffer | ArrayBufferView | string): Uint8Array {
  if (typeof body === "string") return encoder.encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError("body must be the raw request body: an ArrayBuffer, a Uint8Array/Buffer or a string");
}

/** Every value of one header; several values mean the header was sent more than once. */
function headerValues(headers: WebhookHeaders, name: string): string[] {
  if (isFetchHeaders(headers)) {
    // Headers joins repeated fields with ", ", which the format checks then reject.
    const value = headers.get(name);
    return value === null ? [] : [value];
  }
  const entries: Iterable<[string, string | readonly string[] | undefined]> =
    headers instanceof Map ? headers.entries() : Object.entries(headers);
  const out: string[] = [];
  for (const [key, value] of entries) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    if (typeof value === "string") out.push(value);
    else out.push(...value);
  }
  return out;
}

function isFetchHeaders(headers: WebhookHeaders): headers is Headers {
  const h = headers as Partial<Headers>;
  return typeof h.get === "function" && typeof h.append === "function";
}

/** HTTP optional whitespace (space and tab) only, the same set in every Herald library. */
function trimWhitespace(text: string): string {
  return text.replace(/^[ \t]+|[ \t]+$/g, "");
}

function signatureEntries(values: string[]): Uint8Array[] {
  if (values.length > 1) throw new MalformedHeaderError("X-Webhook-Signature appears more than once");
  const text = trimWhitespace(values[0] ?? "");
  if (text === "") throw new MalformedHeaderError("X-Webhook-Signature is missing or empty");
  return text.split(/[ \t]+/).map((entry) => {
    if (!SIGNATURE_ENTRY.test(entry)) {
      throw new MalformedHeaderError("X-Webhook-Signature holds an entry that is not v1=<64 lowercase hex>");
    }
    return fromHex(entry.slice(3));
  });
}

function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** An ArrayBuffer, not a Uint8Array, so the BufferSource typing holds on every TypeScript version. */
function concat(a: Uint8Array, b: Uint8Array): ArrayBuffer {
  const out = new ArrayBuffer(a.length + b.length);
  const view = new Uint8Array(out);
  view.set(a, 0);
  view.set(b, a.length);
  return out;
}

async function hmacSha256(secret: Uint8Array, message: ArrayBuffer): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    "raw",
    new Uint8Array(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, message));
}

/** Time depends only on the lengths, which are public (32 bytes each). */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

const STRING_FIELDS = [
  "id",
  "type",
  "version",
  "occurred_at",
  "tenant_id",
  "project_id",
  "resource_id",
] as const;

/**
 * The envelope, checked for its fields' JSON types; `data` is taken as the type says (Herald checked
 * it against the type before signing), so an event type newer than this file still verifies.
 */
function parseEnvelope(body: Uint8Array): HeraldEnvelope {
  let value: unknown;
  try {
    // fatal: invalid UTF-8 is an error, not U+FFFD; ignoreBOM: a leading BOM stays and fails JSON.parse,
    // as it does in Python and Go.
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body);
    value = JSON.parse(text);
  } catch (cause) {
    throw new InvalidPayloadError("the body is not UTF-8 JSON", { cause });
  }
  if (!isObject(value)) throw new InvalidPayloadError("the body is not a JSON object");
  for (const field of STRING_FIELDS) {
    if (typeof value[field] !== "string")
      throw new InvalidPayloadError(`envelope field ${field} is not a string`);
  }
  if (!isObject(value.data)) throw new InvalidPayloadError("envelope field data is not an object");
  return value as unknown as HeraldEnvelope;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
