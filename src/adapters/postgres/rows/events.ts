// An event as the `events` table holds it, and the batches that write them.
import type { Fragment, Sql } from "postgres";
import type { StoredEvent } from "../../../app/ports/events.ts";
import type { EventType } from "../../../domain/event-catalog.ts";
import { OID } from "./arrays.ts";

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
