import type { EndpointPatch } from "../../app/ports/endpoints.ts";
import type { StoredEvent } from "../../app/ports/events.ts";
import type { IdempotencyRecord, TokenRecord } from "../../app/ports/tokens.ts";
import type { StoredClientCertificate } from "../../domain/client-certificate.ts";
import type { Delivery } from "../../domain/delivery.ts";
import type { Endpoint, StoredHeader, StoredSecret } from "../../domain/endpoint.ts";
import type { EventFilter } from "../../domain/event-filter.ts";
import type { RateLimit } from "../../domain/rate-limit.ts";
import { shardOf } from "../../domain/shards.ts";
import { DEFAULT_SIGNATURE_SCHEME } from "../../domain/signature-scheme.ts";
import { fromCertificateRecord, toCertificateRecord } from "../client-certificate-record.ts";
import type {
  ClientCertificateDoc,
  DeliveryDoc,
  EndpointDoc,
  EventDoc,
  HeaderDoc,
  IdempotencyDoc,
  RateLimitDoc,
  SecretDoc,
  TokenDoc,
} from "./documents.ts";

const secretToDoc = (s: StoredSecret): SecretDoc => ({ sealed: s.sealed, expires_at: s.expiresAt });
const secretFromDoc = (s: SecretDoc): StoredSecret => ({ sealed: s.sealed, expiresAt: s.expires_at });
const headerToDoc = (h: StoredHeader): HeaderDoc => ({ name: h.name, sealed: h.sealed });
const headerFromDoc = (h: HeaderDoc): StoredHeader => ({ name: h.name, sealed: h.sealed });
// Stored as text: a filter's keys start with $ and hold dots, which stores treat as operators and paths.
const filterToDoc = (f: EventFilter | null): string | null => (f === null ? null : JSON.stringify(f));
const rateLimitToDoc = (l: RateLimit | null): RateLimitDoc | null =>
  l === null ? null : l.per === "second" ? { per_second: l.count } : { per_minute: l.count };
const rateLimitFromDoc = (d: RateLimitDoc | null | undefined): RateLimit | null =>
  !d
    ? null
    : "per_second" in d
      ? { count: d.per_second, per: "second" }
      : { count: d.per_minute, per: "minute" };

const asDate = (d: Date) => d;
const certificateToDoc = (c: StoredClientCertificate | null): ClientCertificateDoc | null =>
  c && toCertificateRecord(c, asDate);
const certificateFromDoc = (d: ClientCertificateDoc | null | undefined): StoredClientCertificate | null =>
  d ? fromCertificateRecord(d, asDate) : null;

export function endpointToDoc(e: Endpoint): EndpointDoc {
  return {
    _id: e.id,
    tenant_id: e.tenantId,
    project_id: e.projectId,
    url: e.url,
    events: [...e.events],
    description: e.description,
    enabled: e.enabled,
    disabled_reason: e.disabledReason,
    secrets: e.secrets.map(secretToDoc),
    created_at: e.createdAt,
    updated_at: e.updatedAt,
    failing_since: e.failingSince,
    headers: e.headers.map(headerToDoc),
    signature_scheme: e.signatureScheme,
    filter: filterToDoc(e.filter),
    rate_limit: rateLimitToDoc(e.rateLimit),
    ordering: e.ordering,
    failing_notice: e.failingNotice,
    disabled_at: e.disabledAt,
    disabled_notice: e.disabledNotice,
    client_certificate: certificateToDoc(e.clientCertificate),
  };
}

export function endpointFromDoc(d: EndpointDoc): Endpoint {
  return {
    id: d._id,
    tenantId: d.tenant_id,
    projectId: d.project_id,
    url: d.url,
    events: d.events,
    description: d.description,
    enabled: d.enabled,
    disabledReason: d.disabled_reason,
    secrets: d.secrets.map(secretFromDoc),
    createdAt: d.created_at,
    updatedAt: d.updated_at,
    failingSince: d.failing_since,
    headers: (d.headers ?? []).map(headerFromDoc),
    signatureScheme: d.signature_scheme ?? DEFAULT_SIGNATURE_SCHEME,
    filter: d.filter ? (JSON.parse(d.filter) as EventFilter) : null,
    rateLimit: rateLimitFromDoc(d.rate_limit),
    ordering: d.ordering ?? "none",
    failingNotice: d.failing_notice ?? null,
    disabledAt: d.disabled_at ?? null,
    disabledNotice: d.disabled_notice ?? null,
    clientCertificate: certificateFromDoc(d.client_certificate),
  };
}

/** The $set of an endpoint patch; absent (undefined) fields are left out, null is written. */
export function endpointPatchToSet(p: EndpointPatch): Partial<EndpointDoc> {
  const set: Partial<EndpointDoc> = { updated_at: p.updatedAt };
  if (p.url !== undefined) set.url = p.url;
  if (p.events !== undefined) set.events = [...p.events];
  if (p.description !== undefined) set.description = p.description;
  if (p.enabled !== undefined) set.enabled = p.enabled;
  if (p.disabledReason !== undefined) set.disabled_reason = p.disabledReason;
  if (p.secrets !== undefined) set.secrets = p.secrets.map(secretToDoc);
  if (p.failingSince !== undefined) set.failing_since = p.failingSince;
  if (p.disabledAt !== undefined) set.disabled_at = p.disabledAt;
  if (p.disabledNotice !== undefined) set.disabled_notice = p.disabledNotice;
  if (p.headers !== undefined) set.headers = p.headers.map(headerToDoc);
  if (p.signatureScheme !== undefined) set.signature_scheme = p.signatureScheme;
  if (p.filter !== undefined) set.filter = filterToDoc(p.filter);
  if (p.rateLimit !== undefined) set.rate_limit = rateLimitToDoc(p.rateLimit);
  if (p.ordering !== undefined) set.ordering = p.ordering;
  if (p.clientCertificate !== undefined) set.client_certificate = certificateToDoc(p.clientCertificate);
  return set;
}

export function eventToDoc(e: StoredEvent): EventDoc {
  return {
    _id: e.id,
    tenant_id: e.tenantId,
    project_id: e.projectId,
    type: e.type,
    body: e.body,
    occurred_at: e.occurredAt,
    created_at: e.createdAt,
    targets: [...e.targets],
    fanout_pending: e.fanoutPending,
    resource_id: e.resourceId,
    ...(e.recipientKey !== null && { recipient_key: e.recipientKey }),
    sequence: e.sequence,
    ...(e.traceparent != null && { traceparent: e.traceparent }),
  };
}

export function eventFromDoc(d: EventDoc): StoredEvent {
  return {
    id: d._id,
    tenantId: d.tenant_id,
    projectId: d.project_id,
    type: d.type,
    body: d.body,
    occurredAt: d.occurred_at,
    createdAt: d.created_at,
    targets: d.targets,
    fanoutPending: d.fanout_pending,
    resourceId: d.resource_id ?? null,
    recipientKey: d.recipient_key ?? null,
    sequence: d.sequence ?? d.created_at.getTime() * 1000,
    traceparent: d.traceparent ?? null,
  };
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
  // Outcome fields only when there is an outcome (documents.ts).
  if (d.responseStatus !== null) doc.response_status = d.responseStatus;
  if (d.responseBody !== null) doc.response_body = d.responseBody;
  if (d.error !== null) doc.error = d.error;
  if (d.durationMs !== null) doc.duration_ms = d.durationMs;
  if (d.attemptedAt !== null) doc.attempted_at = d.attemptedAt;
  if (d.nextAttemptAt !== null) doc.next_attempt_at = d.nextAttemptAt;
  if (d.erasedAt !== null) doc.erased_at = d.erasedAt;
  if (d.signatureScheme !== null) doc.signature_scheme = d.signatureScheme;
  if (d.headerNames !== null) doc.header_names = d.headerNames;
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
  };
}

export function tokenToDoc(t: TokenRecord): TokenDoc {
  return {
    _id: t.id,
    hash: t.hash,
    prefix: t.prefix,
    tenant_id: t.tenantId,
    project_id: t.projectId,
    name: t.name,
    created_at: t.createdAt,
    revoked_at: t.revokedAt,
  };
}

export function tokenFromDoc(d: TokenDoc): TokenRecord {
  return {
    id: d._id,
    hash: d.hash,
    prefix: d.prefix,
    tenantId: d.tenant_id,
    projectId: d.project_id,
    name: d.name,
    createdAt: d.created_at,
    revokedAt: d.revoked_at,
  };
}

export function idempotencyToDoc(r: IdempotencyRecord): IdempotencyDoc {
  return { _id: r.scopeKey, event_id: r.eventId, fingerprint: r.fingerprint, created_at: r.createdAt };
}

export function idempotencyFromDoc(d: IdempotencyDoc): IdempotencyRecord {
  return { scopeKey: d._id, eventId: d.event_id, fingerprint: d.fingerprint, createdAt: d.created_at };
}

/** Orders documents fetched with `$in` as the ids were asked for, dropping absent ones. */
export function inOrderOf<T extends { _id: string }>(ids: readonly string[], docs: readonly T[]): T[] {
  const byId = new Map(docs.map((d) => [d._id, d]));
  return ids.flatMap((id) => {
    const d = byId.get(id);
    return d ? [d] : [];
  });
}
