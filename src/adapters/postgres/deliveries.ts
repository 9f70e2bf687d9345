import type { Fragment, Sql } from "postgres";
import type {
  AttemptResult,
  DeliveryFilter,
  DeliveryRepository,
  DueAnswer,
  DueRequest,
} from "../../app/ports/deliveries.ts";
import type { Page, PageRequest, Scope } from "../../app/ports/paging.ts";
import type { Delivery } from "../../domain/delivery.ts";
import { readDue } from "./due-read.ts";
import { afterCursor, fetchSize, newestFirst, toPage } from "./paging.ts";
import { OID } from "./rows/arrays.ts";
import { type DeliveryRow, deliveryColumns, deliveryFromRow, deliveryRecords } from "./rows/deliveries.ts";

/** Rows one retention statement deletes at most: each batch is its own short transaction. */
export const DELETE_BATCH = 10_000;

const unique = (xs: readonly string[]) => [...new Set(xs)];
const pairKey = (eventId: string, webhookId: string) => `${eventId}/${webhookId}`;

/** The API's delivery filters (status, event type, event id, creation window), each an `AND` or nothing. */
export function deliveryFilterSql(sql: Sql, f: DeliveryFilter): Fragment {
  return sql`${f.status !== undefined ? sql`AND status = ${f.status}` : sql``}
    ${f.eventType !== undefined ? sql`AND event_type = ${f.eventType}` : sql``}
    ${f.eventId !== undefined ? sql`AND event_id = ${f.eventId}` : sql``}
    ${f.since !== undefined ? sql`AND created_at >= ${f.since}` : sql``}
    ${f.until !== undefined ? sql`AND created_at < ${f.until}` : sql``}`;
}

export interface PostgresDeliveriesOptions {
  /** Rows one retention statement deletes at most (DELETE_BATCH). */
  deleteBatch?: number;
}

export class PostgresDeliveries implements DeliveryRepository {
  private readonly deleteBatch: number;

  private readonly sql: Sql;
  constructor(sql: Sql, options: PostgresDeliveriesOptions = {}) {
    this.sql = sql;
    this.deleteBatch = options.deleteBatch ?? DELETE_BATCH;
  }

  /** One statement for the batch; a record whose id exists is left as it is. */
  async insertMany(deliveries: readonly Delivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const sql = this.sql;
    await sql`INSERT INTO deliveries (${deliveryColumns(sql)})
      SELECT * FROM ${deliveryRecords(sql, deliveries)}
      ON CONFLICT (id) DO NOTHING`;
  }

  async get(scope: Scope, id: string): Promise<Delivery | null> {
    const [row] = await this.sql<DeliveryRow[]>`SELECT * FROM deliveries
      WHERE id = ${id} AND tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}`;
    return row ? deliveryFromRow(row) : null;
  }

  /** Served by `deliveries_webhook_created`: equality on the scope and endpoint, the cursor as its start. */
  async list(scope: Scope, webhookId: string, f: DeliveryFilter, page: PageRequest): Promise<Page<Delivery>> {
    const sql = this.sql;
    const rows = await sql<DeliveryRow[]>`SELECT * FROM deliveries
      WHERE tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId} AND webhook_id = ${webhookId}
        ${deliveryFilterSql(sql, f)} ${afterCursor(sql, page.cursor)}
      ${newestFirst(sql)}
      LIMIT ${fetchSize(page)}`;
    return toPage(rows, page, deliveryFromRow);
  }

  /** One top-1 probe of `deliveries_event_webhook` per pair. */
  async maxAttempts(pairs: readonly { eventId: string; webhookId: string }[]): Promise<Map<string, number>> {
    const out = new Map(pairs.map((p) => [pairKey(p.eventId, p.webhookId), 0]));
    if (pairs.length === 0) return out;
    const rows = await this.sql<{ event_id: string; webhook_id: string; attempt: number | null }[]>`
      SELECT p.event_id, p.webhook_id,
        (SELECT d.attempt FROM deliveries d
          WHERE d.event_id = p.event_id AND d.webhook_id = p.webhook_id
          ORDER BY d.attempt DESC LIMIT 1) AS attempt
      FROM unnest(${this.sql.array(
        pairs.map((p) => p.eventId),
        OID.text,
      )}::text[], ${this.sql.array(
        pairs.map((p) => p.webhookId),
        OID.text,
      )}::text[]) AS p(event_id, webhook_id)`;
    for (const r of rows) if (r.attempt !== null) out.set(pairKey(r.event_id, r.webhook_id), r.attempt);
    return out;
  }

  /** `deliveries_event_webhook` read in (event, attempt descending) order; the first row of each event wins. */
  async latestForEvents(webhookId: string, eventIds: readonly string[]): Promise<Map<string, Delivery>> {
    const out = new Map<string, Delivery>();
    if (eventIds.length === 0) return out;
    const rows = await this.sql<DeliveryRow[]>`
      SELECT DISTINCT ON (event_id) * FROM deliveries
      WHERE event_id = ANY(${this.sql.array(unique(eventIds), OID.text)}::text[]) AND webhook_id = ${webhookId}
      ORDER BY event_id, attempt DESC`;
    for (const r of rows) out.set(r.event_id, deliveryFromRow(r));
    return out;
  }

  /** Served by `deliveries_webhook_pending`. */
  async cancelPending(scope: Scope, webhookId: string): Promise<number> {
    const r = await this.sql`UPDATE deliveries
      SET status = 'cancelled', attempted_at = NULL, next_attempt_at = NULL
      WHERE webhook_id = ${webhookId} AND status = 'pending'
        AND tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}`;
    return r.count;
  }

  /** One read of the partial index `deliveries_due` (due-read.ts). */
  async due(r: DueRequest): Promise<DueAnswer> {
    return readDue(this.sql, r);
  }

  async postpone(ids: readonly string[], until: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.sql`UPDATE deliveries SET scheduled_at = ${until}
      WHERE id = ANY(${this.sql.array(unique(ids), OID.text)}::text[]) AND status = 'pending'`;
  }

  /** Served by `deliveries_webhook_pending`, whose order is the acceptance order. */
  async head(webhookId: string): Promise<Delivery | null> {
    const [row] = await this.sql<DeliveryRow[]>`SELECT * FROM deliveries
      WHERE webhook_id = ${webhookId} AND status = 'pending'
      ORDER BY sequence, event_id
      LIMIT 1`;
    return row ? deliveryFromRow(row) : null;
  }

  /** One grouped read of `deliveries_webhook_pending`. */
  async countPending(webhookIds: readonly string[]): Promise<Map<string, number>> {
    const out = new Map(webhookIds.map((id) => [id, 0]));
    if (webhookIds.length === 0) return out;
    const rows = await this.sql<{ webhook_id: string; n: number }[]>`
      SELECT webhook_id, count(*)::integer AS n FROM deliveries
      WHERE webhook_id = ANY(${this.sql.array(unique(webhookIds), OID.text)}::text[]) AND status = 'pending'
      GROUP BY webhook_id`;
    for (const r of rows) out.set(r.webhook_id, r.n);
    return out;
  }

  /**
   * One statement for the whole batch: the results' update (each only while its record is still pending)
   * and the follow-ups of the results it wrote (an existing id is left as it is) commit together, so there
   * is no moment where a result is recorded and its follow-up is not, nor the other way round; a result
   * that finds its record finished by another owner writes neither. Repeating it is harmless.
   * When a result acknowledges its pair (ADR 19), the same statement cancels the pair's other pending
   * automatic attempts, found through deliveries_event_webhook. The parts see one snapshot, so the cancel
   * leaves this batch's own records to the results' update (a row is changed by one part only), and it
   * cannot see the follow-ups inserted beside it: the engine makes none for an acknowledged pair.
   */
  async record(results: readonly AttemptResult[]): Promise<void> {
    if (results.length === 0) return;
    const sql = this.sql;
    const withNext = results.filter((r) => r.next);
    const nexts = withNext.map((r) => r.next!);
    const acks = results.flatMap((r) => (r.acknowledges ? [r.acknowledges] : []));
    const text = (f: (r: AttemptResult) => string | null) => sql.array(results.map(f), OID.text);
    const int = (f: (r: AttemptResult) => number | null) => sql.array(results.map(f), OID.int4);
    const time = (f: (r: AttemptResult) => Date | null) => sql.array(results.map(f), OID.timestamptz);
    // Follow-ups only of the results this statement writes (`finalised`): one of a record another owner
    // finished meanwhile (this process lost the shard while its send was on its way) would send the event
    // again. One statement: the follow-up is written exactly when its result is.
    const followUps = sql`
        INSERT INTO deliveries (${deliveryColumns(sql)})
        SELECT d.* FROM ${deliveryRecords(sql, nexts)}
        JOIN unnest(${sql.array(
          nexts.map((n) => n.id),
          OID.text,
        )}::text[], ${sql.array(
          withNext.map((r) => r.id),
          OID.text,
        )}::text[]) AS m(next_id, result_id) ON m.next_id = d.id
        WHERE m.result_id IN (SELECT id FROM finalised)
        ON CONFLICT (id) DO NOTHING`;
    // A record superseded while its send was in flight takes the send's outcome: it is what happened.
    // Each result's header names travel as one JSON text: unnest spreads a two-dimensional array's elements
    // rather than its rows, so a list per row cannot ride in a text[][].
    const finalise = sql`UPDATE deliveries AS d SET
        status = r.status, response_status = r.response_status, response_body = r.response_body,
        error = r.error, duration_ms = r.duration_ms, attempted_at = r.attempted_at,
        next_attempt_at = r.next_attempt_at, signature_scheme = r.signature_scheme,
        header_names = CASE WHEN r.header_names IS NULL THEN NULL
          ELSE ARRAY(SELECT jsonb_array_elements_text(r.header_names::jsonb)) END,
        receipt = r.receipt::jsonb
      FROM unnest(
        ${text((r) => r.id)}::text[], ${text((r) => r.status)}::text[],
        ${int((r) => r.responseStatus)}::integer[], ${text((r) => r.responseBody)}::text[],
        ${text((r) => r.error)}::text[], ${int((r) => r.durationMs)}::integer[],
        ${time((r) => r.attemptedAt)}::timestamptz[], ${time((r) => r.nextAttemptAt)}::timestamptz[],
        ${text((r) => r.signatureScheme ?? null)}::text[],
        ${text((r) => (r.headerNames ? JSON.stringify(r.headerNames) : null))}::text[],
        ${text((r) => (r.receipt ? JSON.stringify(r.receipt) : null))}::text[]
      ) AS r(id, status, response_status, response_body, error, duration_ms, attempted_at, next_attempt_at,
        signature_scheme, header_names, receipt)
      WHERE d.id = r.id AND (d.status = 'pending' OR (d.status = 'cancelled' AND d.error = 'superseded'))
      ${nexts.length === 0 ? sql`` : sql`RETURNING d.id`}`;
    if (acks.length === 0) {
      await (nexts.length === 0 ? sql`${finalise}` : sql`WITH finalised AS (${finalise}) ${followUps}`);
      return;
    }
    await sql`
      WITH finalised AS (${finalise}) ${nexts.length === 0 ? sql`` : sql`, follow_ups AS (${followUps})`}
      UPDATE deliveries AS d SET status = 'cancelled', error = 'superseded', next_attempt_at = NULL
      FROM unnest(
        ${sql.array(
          acks.map((a) => a.eventId),
          OID.text,
        )}::text[], ${sql.array(
          acks.map((a) => a.webhookId),
          OID.text,
        )}::text[]
      ) AS a(event_id, webhook_id)
      WHERE d.event_id = a.event_id AND d.webhook_id = a.webhook_id
        AND d.status = 'pending' AND d.trigger = 'automatic'
        AND d.id <> ALL(${text((r) => r.id)}::text[])`;
  }

  /** An index-only read of `deliveries_due` (its key is the scheduled time). */
  async dueStats(now: Date): Promise<{ count: number; oldestScheduledAt: Date | null }> {
    const [row] = await this.sql<{ count: number; oldest: Date | null }[]>`
      SELECT count(*)::integer AS count, min(scheduled_at) AS oldest FROM deliveries
      WHERE status = 'pending' AND scheduled_at <= ${now}`;
    return { count: row?.count ?? 0, oldestScheduledAt: row?.oldest ?? null };
  }

  /**
   * Deletes in batches of DELETE_BATCH rows, each its own statement (and transaction), found through the
   * block range index on created_at: retention never holds a long transaction or a huge lock set.
   */
  async deleteCreatedBefore(before: Date, scope?: Scope): Promise<number> {
    const sql = this.sql;
    const scoped = scope ? sql`AND tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}` : sql``;
    let total = 0;
    for (;;) {
      const r = await sql`DELETE FROM deliveries WHERE id IN (
          SELECT id FROM deliveries
          WHERE created_at < ${before} AND status <> 'pending' ${scoped}
          LIMIT ${this.deleteBatch}
        )`;
      total += r.count;
      if (r.count < this.deleteBatch) return total;
    }
  }

  /**
   * One statement: every record of these events in the project not erased yet (and any still pending)
   * loses its response body and is marked; the pending ones are cancelled. The old status is read under
   * the row lock the update takes, so a result recorded at the same moment is counted as it ends up.
   */
  async erase(
    scope: Scope,
    eventIds: readonly string[],
    at: Date,
  ): Promise<{ erased: number; cancelled: number }> {
    const events = unique(eventIds);
    if (events.length === 0) return { erased: 0, cancelled: 0 };
    const [row] = await this.sql<{ erased: number; cancelled: number }[]>`
      WITH target AS (
        SELECT id, status = 'pending' AS was_pending FROM deliveries
        WHERE event_id = ANY(${this.sql.array(events, OID.text)}::text[])
          AND tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}
          AND (erased_at IS NULL OR status = 'pending')
        FOR UPDATE
      ), erased AS (
        UPDATE deliveries AS d SET
          status = CASE WHEN t.was_pending THEN 'cancelled' ELSE d.status END,
          attempted_at = CASE WHEN t.was_pending THEN NULL ELSE d.attempted_at END,
          next_attempt_at = CASE WHEN t.was_pending THEN NULL ELSE d.next_attempt_at END,
          response_body = NULL,
          erased_at = ${at}
        FROM target AS t
        WHERE d.id = t.id
        RETURNING t.was_pending
      )
      SELECT count(*)::integer AS erased, count(*) FILTER (WHERE was_pending)::integer AS cancelled FROM erased`;
    return { erased: row?.erased ?? 0, cancelled: row?.cancelled ?? 0 };
  }
}
