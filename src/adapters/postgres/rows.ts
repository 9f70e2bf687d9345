// Schema note (0001-initial.sql, not shipped yet, changed with the endpoints/events repositories): every id and
// key column (ids, tenant_id, project_id, webhook_id, event_id, hash, scope_key, resource_id, recipient_key,
// owner, parent_id) is `text COLLATE "C"`, so ORDER BY id and (sequence, event_id) sort by code point as the
// memory and Mongo stores do on any database locale; and events_without_subjects (a partial index, empty on
// this store) keeps the subject backfill at start from reading the whole events table.
//
// Row shapes of the PostgreSQL store and their mappings to the domain, one place for every table, so each
// repository reads and writes a table the same way (migrations/0001-initial.sql is the schema).
//
// Batches are written with `unnest` over one typed array per column: one statement and a fixed number of
// parameters whatever the batch size, so the statement is prepared once. postgres.js types an array
// parameter from its element type's array OID, which it learns on a connection's first start (fetch_types,
// the default; the store migrates before any repository runs), hence `sql.array(values, ELEMENT_OID)`.
import type { Fragment, Sql } from "postgres";
import type { EndpointPatch } from "../../app/ports/endpoints.ts";
import type { ErasureRecord, ProjectSettings } from "../../app/ports/erasures.ts";
import type { StoredEvent } from "../../app/ports/events.ts";
import type { ShardLease } from "../../app/ports/shards.ts";
import type { IdempotencyRecord, TokenRecord } from "../../app/ports/tokens.ts";
import type { StoredClientCertificate } from "../../domain/client-certificate.ts";
import type { Delivery, DeliveryError, DeliveryStatus, DeliveryTrigger } from "../../domain/delivery.ts";
import type {
  DisabledReason,
  Endpoint,
  Ordering,
  StoredHeader,
  StoredSecret,
} from "../../domain/endpoint.ts";
import type { EventType } from "../../domain/event-catalog.ts";
import type { EventFilter } from "../../domain/event-filter.ts";
import type { RateLimit } from "../../domain/rate-limit.ts";
import { shardOf } from "../../domain/shards.ts";
import type { SignatureScheme } from "../../domain/signature-scheme.ts";
import {
  type ClientCertificateRecord,
  fromCertificateRecord,
  toCertificateRecord,
} from "../client-certificate-record.ts";

/** Element type OIDs for `sql.array` (pg_type). */
export const OID = { text: 25, int4: 23, int8: 20, bool: 16, timestamptz: 1184 } as const;

/** Typed array parameters, for `= ANY(${...}::text[])` and `unnest(...)`; cast them in the SQL as well. */
export const texts = (sql: Sql, xs: readonly (string | null)[]) => sql.array([...xs], OID.text);
export const ints = (sql: Sql, xs: readonly (number | null)[]) => sql.array([...xs], OID.int4);
export const bigints = (sql: Sql, xs: readonly number[]) => sql.array([...xs], OID.int8);
export const bools = (sql: Sql, xs: readonly boolean[]) => sql.array([...xs], OID.bool);
export const times = (sql: Sql, xs: readonly (Date | null)[]) => sql.array([...xs], OID.timestamptz);

// ---------------------------------------------------------------------------------------------- deliveries

/** A row of `deliveries` as postgres.js reads it (timestamptz as Date, bigint as number: connection.ts). */
export interface DeliveryRow {
  id: string;
  tenant_id: string;
  project_id: string;
  webhook_id: string;
  event_id: string;
  event_type: EventType;
  attempt: number;
  trigger: DeliveryTrigger;
  status: DeliveryStatus;
  url: string;
  response_status: number | null;
  response_body: string | null;
  error: DeliveryError | null;
  duration_ms: number | null;
  scheduled_at: Date;
  attempted_at: Date | null;
  next_attempt_at: Date | null;
  created_at: Date;
  shard: number;
  erased_at: Date | null;
  sequence: number;
  signature_scheme: SignatureScheme | null;
  header_names: string[] | null;
}

export function deliveryFromRow(r: DeliveryRow): Delivery {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    projectId: r.project_id,
    webhookId: r.webhook_id,
    eventId: r.event_id,
    eventType: r.event_type,
    attempt: r.attempt,
    trigger: r.trigger,
    status: r.status,
    url: r.url,
    responseStatus: r.response_status,
    responseBody: r.response_body,
    error: r.error,
    durationMs: r.duration_ms,
    scheduledAt: r.scheduled_at,
    attemptedAt: r.attempted_at,
    nextAttemptAt: r.next_attempt_at,
    createdAt: r.created_at,
    erasedAt: r.erased_at,
    sequence: r.sequence,
    signatureScheme: r.signature_scheme,
    headerNames: r.header_names,
  };
}

/** The columns of `deliveries`, in the order `deliveryRecords` yields them: `INSERT INTO deliveries (${...})`. */
export function deliveryColumns(sql: Sql): Fragment {
  return sql`id, tenant_id, project_id, webhook_id, event_id, event_type, attempt, trigger, status, url,
    response_status, response_body, error, duration_ms, scheduled_at, attempted_at, next_attempt_at, created_at,
    shard, erased_at, sequence`;
}

/**
 * The deliveries as a set of rows with every column of `deliveries` (the shard computed from the endpoint),
 * for `INSERT INTO deliveries (${deliveryColumns(sql)}) SELECT * FROM ${deliveryRecords(sql, ds)}`.
 */
export function deliveryRecords(sql: Sql, ds: readonly Delivery[]): Fragment {
  const text = (f: (d: Delivery) => string | null) => sql.array(ds.map(f), OID.text);
  const int = (f: (d: Delivery) => number | null) => sql.array(ds.map(f), OID.int4);
  const time = (f: (d: Delivery) => Date | null) => sql.array(ds.map(f), OID.timestamptz);
  const big = (f: (d: Delivery) => number) => sql.array(ds.map(f), OID.int8);
  return sql`unnest(
      ${text((d) => d.id)}::text[], ${text((d) => d.tenantId)}::text[], ${text((d) => d.projectId)}::text[],
      ${text((d) => d.webhookId)}::text[], ${text((d) => d.eventId)}::text[], ${text((d) => d.eventType)}::text[],
      ${int((d) => d.attempt)}::integer[], ${text((d) => d.trigger)}::text[], ${text((d) => d.status)}::text[],
      ${text((d) => d.url)}::text[], ${int((d) => d.responseStatus)}::integer[],
      ${text((d) => d.responseBody)}::text[], ${text((d) => d.error)}::text[], ${int((d) => d.durationMs)}::integer[],
      ${time((d) => d.scheduledAt)}::timestamptz[], ${time((d) => d.attemptedAt)}::timestamptz[],
      ${time((d) => d.nextAttemptAt)}::timestamptz[], ${time((d) => d.createdAt)}::timestamptz[],
      ${int((d) => shardOf(d.webhookId))}::integer[], ${time((d) => d.erasedAt)}::timestamptz[],
      ${big((d) => d.sequence)}::bigint[]
    ) AS d(id, tenant_id, project_id, webhook_id, event_id, event_type, attempt, trigger, status, url,
      response_status, response_body, error, duration_ms, scheduled_at, attempted_at, next_attempt_at,
      created_at, shard, erased_at, sequence)`;
}

/**
 * The fields a publish's first attempt holds: its own four (id, webhookId, url, status) and those it takes
 * from its event. Every other field is empty (see `isFirstAttemptOf`).
 */
const FIRST_ATTEMPT_FIELDS = new Set([
  "id",
  "webhookId",
  "url",
  "status",
  "tenantId",
  "projectId",
  "eventId",
  "eventType",
  "attempt",
  "trigger",
  "scheduledAt",
  "createdAt",
  "sequence",
]);

/**
 * Whether `d` is the first attempt of `e` as a publish writes it: attempt 1, automatic, scheduled and
 * created when its event was, with its event's scope, type and sequence, and every other field empty.
 * Such a delivery is written from its own four fields and its event's row (`firstDeliveryRecords`); any
 * field this does not know (one added later) that holds a value sends the whole row instead.
 */
export function isFirstAttemptOf(d: Delivery, e: StoredEvent): boolean {
  if (
    d.eventId !== e.id ||
    d.tenantId !== e.tenantId ||
    d.projectId !== e.projectId ||
    d.eventType !== e.type ||
    d.attempt !== 1 ||
    d.trigger !== "automatic" ||
    d.sequence !== e.sequence ||
    d.scheduledAt.getTime() !== e.createdAt.getTime() ||
    d.createdAt.getTime() !== e.createdAt.getTime()
  )
    return false;
  for (const [k, v] of Object.entries(d)) {
    if (!FIRST_ATTEMPT_FIELDS.has(k) && v !== null && v !== undefined) return false;
  }
  return true;
}

/**
 * A publish's first attempts (each `isFirstAttemptOf` its event) as rows of their own fields only, joined
 * to the events just written for the rest: six arrays to serialise and parse instead of twenty-one.
 */
export function firstDeliveryRecords(sql: Sql, ds: readonly Delivery[]): Fragment {
  const text = (f: (d: Delivery) => string) => sql.array(ds.map(f), OID.text);
  return sql`unnest(
      ${text((d) => d.id)}::text[], ${text((d) => d.eventId)}::text[], ${text((d) => d.webhookId)}::text[],
      ${text((d) => d.status)}::text[], ${text((d) => d.url)}::text[],
      ${sql.array(
        ds.map((d) => shardOf(d.webhookId)),
        OID.int4,
      )}::integer[]
    ) AS d(id, event_id, webhook_id, status, url, shard)`;
}

// ----------------------------------------------------------------------------------------------- endpoints

/** A secret as the `secrets` jsonb array holds it. */
type SecretJson = {
  sealed: string;
  expires_at: string | null;
};

export interface EndpointRow {
  id: string;
  tenant_id: string;
  project_id: string;
  url: string;
  events: EventType[];
  description: string | null;
  enabled: boolean;
  disabled_reason: DisabledReason | null;
  secrets: SecretJson[];
  created_at: Date;
  updated_at: Date;
  failing_since: Date | null;
  failing_notice: Date | null;
  disabled_at: Date | null;
  disabled_notice: Date | null;
  headers: StoredHeader[];
  signature_scheme: SignatureScheme;
  /** The payload filter as the JSON text given (its keys hold $ and dots; text keeps their order). */
  filter: string | null;
  rate_limit: RateLimit | null;
  ordering: Ordering;
  /** Migration 0004; null for none. */
  client_certificate: ClientCertificateJson | null;
}

/** A client certificate as jsonb (ADR 22): the PEM chain and its facts in clear, the key sealed. */
type ClientCertificateJson = ClientCertificateRecord<string>;

export function endpointFromRow(r: EndpointRow): Endpoint {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    projectId: r.project_id,
    url: r.url,
    events: r.events,
    description: r.description,
    enabled: r.enabled,
    disabledReason: r.disabled_reason,
    secrets: r.secrets.map((s) => ({
      sealed: s.sealed,
      expiresAt: s.expires_at === null ? null : new Date(s.expires_at),
    })),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    failingSince: r.failing_since,
    failingNotice: r.failing_notice,
    disabledAt: r.disabled_at,
    disabledNotice: r.disabled_notice,
    headers: r.headers.map((h) => ({ name: h.name, sealed: h.sealed })),
    signatureScheme: r.signature_scheme,
    filter: r.filter === null ? null : (JSON.parse(r.filter) as EventFilter),
    rateLimit: r.rate_limit && { count: r.rate_limit.count, per: r.rate_limit.per },
    ordering: r.ordering,
    clientCertificate:
      r.client_certificate && fromCertificateRecord(r.client_certificate, (t) => new Date(t)),
  };
}

const secretsJson = (secrets: readonly StoredSecret[]): SecretJson[] =>
  secrets.map((s) => ({ sealed: s.sealed, expires_at: s.expiresAt?.toISOString() ?? null }));
const headersJson = (headers: readonly StoredHeader[]) =>
  headers.map((h) => ({ name: h.name, sealed: h.sealed }));
const rateLimitJson = (l: RateLimit | null) => l && { count: l.count, per: l.per };
const certificateJson = (c: StoredClientCertificate): ClientCertificateJson =>
  toCertificateRecord(c, (d) => d.toISOString());

/** A column's value as a parameter: jsonb, arrays and text columns typed so that nothing is inferred. */
type ColumnValue =
  | ReturnType<Sql["json"]>
  | ReturnType<Sql["array"]>
  | string
  | number
  | boolean
  | Date
  | null;

/**
 * The columns an endpoint patch sets (absent fields are left out, null is written), for
 * `UPDATE endpoints SET ${sql(set)}`; `updated_at` is always among them.
 */
export function endpointPatchColumns(sql: Sql, p: EndpointPatch): Record<string, ColumnValue> {
  const set: Record<string, ColumnValue> = { updated_at: p.updatedAt };
  if (p.url !== undefined) set.url = p.url;
  if (p.events !== undefined) set.events = sql.array([...p.events], OID.text);
  if (p.description !== undefined) set.description = p.description;
  if (p.enabled !== undefined) set.enabled = p.enabled;
  if (p.disabledReason !== undefined) set.disabled_reason = p.disabledReason;
  if (p.secrets !== undefined) set.secrets = sql.json(secretsJson(p.secrets));
  if (p.failingSince !== undefined) set.failing_since = p.failingSince;
  if (p.disabledAt !== undefined) set.disabled_at = p.disabledAt;
  if (p.disabledNotice !== undefined) set.disabled_notice = p.disabledNotice;
  if (p.headers !== undefined) set.headers = sql.json(headersJson(p.headers));
  if (p.signatureScheme !== undefined) set.signature_scheme = p.signatureScheme;
  if (p.filter !== undefined) set.filter = p.filter === null ? null : JSON.stringify(p.filter);
  if (p.rateLimit !== undefined)
    set.rate_limit = p.rateLimit === null ? null : sql.json(rateLimitJson(p.rateLimit));
  if (p.ordering !== undefined) set.ordering = p.ordering;
  if (p.clientCertificate !== undefined)
    set.client_certificate =
      p.clientCertificate === null ? null : sql.json(certificateJson(p.clientCertificate));
  return set;
}

/** Every column of a new endpoint, for `INSERT INTO endpoints ${sql(row)}`. */
export function endpointColumns(sql: Sql, e: Endpoint): Record<string, ColumnValue> {
  const { updated_at, ...patched } = endpointPatchColumns(sql, {
    url: e.url,
    events: e.events,
    description: e.description,
    enabled: e.enabled,
    disabledReason: e.disabledReason,
    secrets: e.secrets,
    failingSince: e.failingSince,
    disabledAt: e.disabledAt,
    disabledNotice: e.disabledNotice,
    headers: e.headers,
    signatureScheme: e.signatureScheme,
    filter: e.filter,
    rateLimit: e.rateLimit,
    ordering: e.ordering,
    clientCertificate: e.clientCertificate,
    updatedAt: e.updatedAt,
  });
  return {
    id: e.id,
    failing_notice: e.failingNotice,
    tenant_id: e.tenantId,
    project_id: e.projectId,
    created_at: e.createdAt,
    updated_at: updated_at ?? e.updatedAt,
    ...patched,
  };
}

// -------------------------------------------------------------------------------------------------- events

export interface EventRow {
  id: string;
  tenant_id: string;
  project_id: string;
  type: EventType;
  body: string;
  occurred_at: Date;
  created_at: Date;
  targets: string[];
  fanout_pending: boolean;
  resource_id: string | null;
  recipient_key: string | null;
  sequence: number;
  traceparent: string | null;
}

export function eventFromRow(r: EventRow): StoredEvent {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    projectId: r.project_id,
    type: r.type,
    body: r.body,
    occurredAt: r.occurred_at,
    createdAt: r.created_at,
    targets: r.targets,
    fanoutPending: r.fanout_pending,
    resourceId: r.resource_id,
    recipientKey: r.recipient_key,
    sequence: r.sequence,
    traceparent: r.traceparent,
  };
}

/** The columns of `events`, in the order `eventRecords` yields them. */
export function eventColumns(sql: Sql): Fragment {
  return sql`id, tenant_id, project_id, type, body, occurred_at, created_at, targets, fanout_pending, resource_id,
    recipient_key, sequence, traceparent`;
}

/**
 * The events as a set of rows with every column of `events`, for
 * `INSERT INTO events (${eventColumns(sql)}) SELECT * FROM ${eventRecords(sql, es)}`. Each event's targets
 * travel as a JSON array: `unnest` of a two-dimensional array would flatten lists of different lengths.
 */
export function eventRecords(sql: Sql, es: readonly StoredEvent[]): Fragment {
  const text = (f: (e: StoredEvent) => string | null) => sql.array(es.map(f), OID.text);
  const time = (f: (e: StoredEvent) => Date) => sql.array(es.map(f), OID.timestamptz);
  const bool = (f: (e: StoredEvent) => boolean) => sql.array(es.map(f), OID.bool);
  const big = (f: (e: StoredEvent) => number) => sql.array(es.map(f), OID.int8);
  return sql`(SELECT e.id, e.tenant_id, e.project_id, e.type, e.body, e.occurred_at, e.created_at,
      ARRAY(SELECT jsonb_array_elements_text(e.targets)), e.fanout_pending, e.resource_id, e.recipient_key, e.sequence,
      e.traceparent
    FROM unnest(
      ${text((e) => e.id)}::text[], ${text((e) => e.tenantId)}::text[], ${text((e) => e.projectId)}::text[],
      ${text((e) => e.type)}::text[], ${text((e) => e.body)}::text[], ${time((e) => e.occurredAt)}::timestamptz[],
      ${time((e) => e.createdAt)}::timestamptz[], ${text((e) => JSON.stringify(e.targets))}::jsonb[],
      ${bool((e) => e.fanoutPending)}::boolean[], ${text((e) => e.resourceId)}::text[],
      ${text((e) => e.recipientKey)}::text[], ${big((e) => e.sequence)}::bigint[],
      ${text((e) => e.traceparent ?? null)}::text[]
    ) AS e(id, tenant_id, project_id, type, body, occurred_at, created_at, targets, fanout_pending, resource_id,
      recipient_key, sequence, traceparent)) AS e`;
}

// ------------------------------------------------------------------------------------------ tokens and keys

export interface TokenRow {
  id: string;
  hash: string;
  prefix: string;
  tenant_id: string;
  project_id: string;
  name: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

export const tokenFromRow = (r: TokenRow): TokenRecord => ({
  id: r.id,
  hash: r.hash,
  prefix: r.prefix,
  tenantId: r.tenant_id,
  projectId: r.project_id,
  name: r.name,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

export const tokenToRow = (t: TokenRecord): TokenRow => ({
  id: t.id,
  hash: t.hash,
  prefix: t.prefix,
  tenant_id: t.tenantId,
  project_id: t.projectId,
  name: t.name,
  created_at: t.createdAt,
  revoked_at: t.revokedAt,
});

export interface IdempotencyRow {
  scope_key: string;
  event_id: string;
  fingerprint: string;
  created_at: Date;
}

export const idempotencyFromRow = (r: IdempotencyRow): IdempotencyRecord => ({
  scopeKey: r.scope_key,
  eventId: r.event_id,
  fingerprint: r.fingerprint,
  createdAt: r.created_at,
});

export const idempotencyToRow = (r: IdempotencyRecord): IdempotencyRow => ({
  scope_key: r.scopeKey,
  event_id: r.eventId,
  fingerprint: r.fingerprint,
  created_at: r.createdAt,
});

// ---------------------------------------------------------------------------------- erasures and settings

export interface ErasureRow {
  id: string;
  tenant_id: string;
  project_id: string;
  subject: ErasureRecord["subject"];
  resource_id: string | null;
  events_erased: number;
  deliveries_erased: number;
  deliveries_cancelled: number;
  created_at: Date;
}

export const erasureFromRow = (r: ErasureRow): ErasureRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  projectId: r.project_id,
  subject: r.subject,
  resourceId: r.resource_id,
  eventsErased: r.events_erased,
  deliveriesErased: r.deliveries_erased,
  deliveriesCancelled: r.deliveries_cancelled,
  createdAt: r.created_at,
});

export const erasureToRow = (r: ErasureRecord): ErasureRow => ({
  id: r.id,
  tenant_id: r.tenantId,
  project_id: r.projectId,
  subject: r.subject,
  resource_id: r.resourceId,
  events_erased: r.eventsErased,
  deliveries_erased: r.deliveriesErased,
  deliveries_cancelled: r.deliveriesCancelled,
  created_at: r.createdAt,
});

export interface ProjectSettingsRow {
  tenant_id: string;
  project_id: string;
  retention_ms: number | null;
  updated_at: Date;
}

export const settingsFromRow = (r: ProjectSettingsRow): ProjectSettings => ({
  tenantId: r.tenant_id,
  projectId: r.project_id,
  retentionMs: r.retention_ms,
  updatedAt: r.updated_at,
});

export const settingsToRow = (s: ProjectSettings): ProjectSettingsRow => ({
  tenant_id: s.tenantId,
  project_id: s.projectId,
  retention_ms: s.retentionMs,
  updated_at: s.updatedAt,
});

// ------------------------------------------------------------------------------------- leases and processes

export interface ShardLeaseRow {
  shard: number;
  generation: number;
  owner: string;
  expires_at: Date;
}

export const leaseFromRow = (r: ShardLeaseRow): ShardLease => ({
  shard: r.shard,
  generation: r.generation,
  owner: r.owner,
  expiresAt: r.expires_at,
});
