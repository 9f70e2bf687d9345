// Row shapes of the PostgreSQL store and their mappings to the domain, one place for every table, so each
// repository reads and writes a table the same way (migrations/0001-initial.sql is the schema).
//
// Batches are written with `unnest` over one typed array per column: one statement and a fixed number of
// parameters whatever the batch size, so the statement is prepared once. postgres.js types an array
// parameter from its element type's array OID, which it learns on a connection's first start (fetch_types,
// the default; the store migrates before any repository runs), hence `sql.array(values, ELEMENT_OID)`.
import type { Fragment, Sql } from "postgres";
import type { Delivery, DeliveryError, DeliveryStatus, DeliveryTrigger } from "../../domain/delivery.ts";
import type { EventType } from "../../domain/event-catalog.ts";
import { shardOf } from "../../domain/shards.ts";

/** Element type OIDs for `sql.array` (pg_type). */
export const OID = { text: 25, int4: 23, int8: 20, bool: 16, timestamptz: 1184 } as const;

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
