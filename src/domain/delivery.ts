import type { EventType } from "./event-catalog.ts";
import { SEND_ERRORS, type SendError } from "./reason-codes.ts";
import type { SignatureScheme } from "./signature-scheme.ts";

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed", "skipped", "cancelled"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const DELIVERY_TRIGGERS = ["automatic", "manual"] as const;
export type DeliveryTrigger = (typeof DELIVERY_TRIGGERS)[number];

export { SEND_ERRORS, type SendError };

/**
 * A record's `error`: why its send failed, or `superseded` on a `cancelled` automatic attempt whose
 * event another attempt delivered to the same endpoint first (ADR 19): it is never sent.
 */
export const DELIVERY_ERRORS = [...SEND_ERRORS, "superseded"] as const;
export type DeliveryError = (typeof DELIVERY_ERRORS)[number];

/** One attempt to POST one event to one endpoint. */
export interface Delivery {
  id: string;
  tenantId: string;
  projectId: string;
  webhookId: string;
  eventId: string;
  eventType: EventType;
  /** 1, 2, ... per event and endpoint. */
  attempt: number;
  trigger: DeliveryTrigger;
  status: DeliveryStatus;
  url: string;
  responseStatus: number | null;
  responseBody: string | null;
  error: DeliveryError | null;
  durationMs: number | null;
  scheduledAt: Date;
  attemptedAt: Date | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  /**
   * When an erasure removed what the record held of its event's subject (the response body); a pending
   * record it met was cancelled then. Null for a record no erasure touched (ADR 15).
   */
  erasedAt: Date | null;
  /**
   * The event's place in the order Herald accepted events (ADR 16): every attempt of the event carries
   * its event's sequence, so an endpoint with ordering "fifo" receives its events in that order.
   */
  sequence: number;
  /**
   * The signature scheme the attempt was signed with, as in force at its send; null before it was sent,
   * and on records written before this was kept (the console then says it cannot tell).
   */
  signatureScheme: SignatureScheme | null;
  /** The names of the custom headers the attempt sent (never their values); null as `signatureScheme`. */
  headerNames: string[] | null;
  /**
   * What a broker answered when it stored the attempt's message (ADR 27; see SendOutcome.receipt); absent
   * (stores answer no null) for an HTTPS attempt, a failure, or one not sent yet.
   */
  receipt?: Receipt | null;
}

/** A broker's acknowledgement of a stored message: `{partition, offset}`, `{delivery_tag}`, `{message_id, ...}`. */
export type Receipt = Record<string, string | number>;

/** Earlier in acceptance order first: by sequence, then event id (equal sequences: other processes). */
export function acceptanceOrder(a: Pick<Delivery, "sequence" | "eventId">, b: typeof a): number {
  return a.sequence - b.sequence || (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0);
}

/** What a new attempt takes from the caller; the rest comes from the earlier attempt it repeats. */
export interface AttemptSpec {
  id: string;
  attempt: number;
  trigger: DeliveryTrigger;
  url: string;
  scheduledAt: Date;
  createdAt: Date;
}

/**
 * A new pending attempt of the same event to the same endpoint as `earlier` (an automatic follow-up,
 * a manual retry, a recovery), with no outcome yet.
 */
export function repeatAttempt(earlier: Delivery, spec: AttemptSpec): Delivery {
  return {
    id: spec.id,
    tenantId: earlier.tenantId,
    projectId: earlier.projectId,
    webhookId: earlier.webhookId,
    eventId: earlier.eventId,
    eventType: earlier.eventType,
    attempt: spec.attempt,
    trigger: spec.trigger,
    status: "pending",
    url: spec.url,
    responseStatus: null,
    responseBody: null,
    error: null,
    durationMs: null,
    scheduledAt: spec.scheduledAt,
    attemptedAt: null,
    nextAttemptAt: null,
    createdAt: spec.createdAt,
    erasedAt: null,
    sequence: earlier.sequence,
    signatureScheme: null,
    headerNames: null,
  };
}

/** Largest response body kept on a delivery record, in bytes. */
export const RESPONSE_BODY_LIMIT = 4096;

/** The outcome of sending one attempt, as the sender reports it. */
export interface SendOutcome {
  ok: boolean;
  responseStatus: number | null;
  responseBody: string | null;
  error: SendError | null;
  durationMs: number;
  retryAfterMs: number | null;
  /**
   * What a broker answered when it stored the message (ADR 27): `{partition, offset}` (Kafka),
   * `{delivery_tag}` (RabbitMQ), `{message_id, sequence_number?}` (SQS). Absent or null for HTTPS.
   */
  receipt?: Receipt | null;
}
