import type {
  Delivery,
  DeliveryError,
  DeliveryStatus,
  DeliveryTrigger,
  Receipt,
} from "../../../domain/delivery.ts";
import type { EventType } from "../../../domain/event-catalog.ts";
import { shardOf } from "../../../domain/shards.ts";
import type { SignatureScheme } from "../../../domain/signature-scheme.ts";

export interface DeliveryDoc {
  _id: string;
  tenant_id: string;
  project_id: string;
  webhook_id: string;
  event_id: string;
  event_type: EventType;
  attempt: number;
  trigger: DeliveryTrigger;
  status: DeliveryStatus;
  url: string;
  // The attempt's outcome: absent (or null) until the attempt is made. A pending record is written
  // without them, so the due read (which FerretDB v1 decodes record by record) has less to decode.
  response_status?: number | null;
  response_body?: string | null;
  error?: DeliveryError | null;
  duration_ms?: number | null;
  scheduled_at: Date;
  attempted_at?: Date | null;
  next_attempt_at?: Date | null;
  created_at: Date;
  /** The endpoint's shard (ADR 9): the owner of a shard reads due work by it. */
  shard: number;
  /** Set by an erasure (ADR 15); absent on a record no erasure touched. */
  erased_at?: Date | null;
  /** The event's acceptance order (ADR 16); absent on records from before it existed. */
  sequence?: number;
  /** The scheme the attempt was signed with; absent before its send and on records from before it was kept. */
  signature_scheme?: SignatureScheme | null;
  /** The custom header names the attempt sent (never values); absent as `signature_scheme`. */
  header_names?: string[] | null;
  /** What the broker answered (ADR 27); absent or null for none. */
  receipt?: Receipt | null;
}

/** A new delivery record, with its endpoint's shard. */
export function deliveryToDoc(d: Delivery): DeliveryDoc {
  const doc: DeliveryDoc = {
    _id: d.id,
    tenant_id: d.tenantId,
    project_id: d.projectId,
    webhook_id: d.webhookId,
    event_id: d.eventId,
    event_type: d.eventType,
    attempt: d.attempt,
    trigger: d.trigger,
    status: d.status,
    url: d.url,
    scheduled_at: d.scheduledAt,
    created_at: d.createdAt,
    shard: shardOf(d.webhookId),
    sequence: d.sequence,
  };
  // Outcome fields only when there is an outcome (DeliveryDoc above).
  if (d.responseStatus !== null) doc.response_status = d.responseStatus;
  if (d.responseBody !== null) doc.response_body = d.responseBody;
  if (d.error !== null) doc.error = d.error;
  if (d.durationMs !== null) doc.duration_ms = d.durationMs;
  if (d.attemptedAt !== null) doc.attempted_at = d.attemptedAt;
  if (d.nextAttemptAt !== null) doc.next_attempt_at = d.nextAttemptAt;
  if (d.erasedAt !== null) doc.erased_at = d.erasedAt;
  if (d.signatureScheme !== null) doc.signature_scheme = d.signatureScheme;
  if (d.headerNames !== null) doc.header_names = d.headerNames;
  if (d.receipt) doc.receipt = d.receipt;
  return doc;
}

export function deliveryFromDoc(d: DeliveryDoc): Delivery {
  return {
    id: d._id,
    tenantId: d.tenant_id,
    projectId: d.project_id,
    webhookId: d.webhook_id,
    eventId: d.event_id,
    eventType: d.event_type,
    attempt: d.attempt,
    trigger: d.trigger,
    status: d.status,
    url: d.url,
    responseStatus: d.response_status ?? null,
    responseBody: d.response_body ?? null,
    error: d.error ?? null,
    durationMs: d.duration_ms ?? null,
    scheduledAt: d.scheduled_at,
    attemptedAt: d.attempted_at ?? null,
    nextAttemptAt: d.next_attempt_at ?? null,
    createdAt: d.created_at,
    erasedAt: d.erased_at ?? null,
    sequence: d.sequence ?? d.created_at.getTime() * 1000,
    signatureScheme: d.signature_scheme ?? null,
    headerNames: d.header_names ?? null,
    // Present only when there is one, as the other stores answer it.
    ...(d.receipt ? { receipt: d.receipt } : {}),
  };
}
