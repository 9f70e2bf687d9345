// A delivery as the `deliveries` table holds it, and the batches that write them (one statement per batch).
import type { Fragment, Sql } from "postgres";
import type { StoredEvent } from "../../../app/ports/events.ts";
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
import { OID } from "./arrays.ts";

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
  /** Migration 0008; absent from rows read by a column list that leaves it out. */
  receipt?: Receipt | null;
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
    // Present only when there is one, as the other stores answer it.
    ...(r.receipt ? { receipt: r.receipt } : {}),
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
