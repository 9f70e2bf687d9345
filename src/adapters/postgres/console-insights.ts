import type { Fragment, Sql } from "postgres";
import type { AttemptSummary, DeliveryInsights } from "../../app/ports/console.ts";
import type { DeliveryFilter } from "../../app/ports/deliveries.ts";
import type { Page, PageRequest, Scope } from "../../app/ports/paging.ts";
import { DELIVERY_STATUSES, type Delivery, type DeliveryStatus } from "../../domain/delivery.ts";
import { deliveryFilterSql } from "./deliveries.ts";
import { afterCursor, fetchSize, newestFirst, toPage } from "./paging.ts";
import { OID } from "./rows/arrays.ts";
import { type DeliveryRow, deliveryFromRow } from "./rows/deliveries.ts";

/**
 * Every status, so a walk of `deliveries_webhook_attempted` (webhook, status, attempted_at) visits each
 * (endpoint, status) range of the index once, newest attempt first, and reads nothing older than asked.
 */
const STATUSES: readonly DeliveryStatus[] = DELIVERY_STATUSES;

/** The shortest first window of `attemptsSince` (later ones double). */
const ATTEMPT_WINDOW_MS = 60_000;

/**
 * Delivery insights. A project can hold most of the table (one project is the usual self-hosted setup),
 * so no query here reads a project's deliveries whole: each one walks, for each endpoint of the project,
 * only the index range it needs, and merges what the walks found.
 * - The project's endpoints: the ones asked for, or the distinct endpoints that have deliveries in the
 *   project (`hooks`), found by skipping through `deliveries_webhook_created`, one index probe per
 *   endpoint. (Not the endpoints table: a deleted endpoint's records stay listed.)
 * - Newest-first lists and "created since": `deliveries_webhook_created` per endpoint. A filter the index
 *   does not hold (status, event type) is checked on the rows, so a rare value reads further per endpoint.
 * - Attempts since a moment and the last success: `deliveries_webhook_attempted` per (endpoint, status).
 * - The due backlog: `deliveries_due`, or `deliveries_webhook_pending` for some endpoints.
 */
export class PostgresDeliveryInsights implements DeliveryInsights {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  private scoped(scope: Scope, alias: Fragment): Fragment {
    return this.sql`${alias}.tenant_id = ${scope.tenantId} AND ${alias}.project_id = ${scope.projectId}`;
  }

  /**
   * `WITH RECURSIVE hooks(id)`: the endpoints asked for, or every endpoint with deliveries in the project,
   * each found by one probe of `deliveries_webhook_created` for the next webhook id (a loose index scan).
   */
  private hooks(scope: Scope, webhookIds: readonly string[] | null): Fragment {
    const sql = this.sql;
    if (webhookIds !== null)
      return sql`WITH RECURSIVE hooks(id) AS (
        SELECT DISTINCT unnest(${sql.array([...webhookIds], OID.text)}::text[])
      )`;
    const inProject = sql`tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}`;
    return sql`WITH RECURSIVE walk(id) AS (
        SELECT min(webhook_id) FROM deliveries WHERE ${inProject}
        UNION ALL
        SELECT (SELECT min(webhook_id) FROM deliveries WHERE ${inProject} AND webhook_id > walk.id)
        FROM walk WHERE walk.id IS NOT NULL
      ), hooks(id) AS (SELECT id FROM walk WHERE id IS NOT NULL)`;
  }

  /**
   * Newest first, read in time windows going back from the project's newest attempt, each twice as long
   * as the one before: a window reads, per (endpoint, status), only the index range it covers, so a busy
   * project costs about the `limit` rows asked for, not every attempt since `since` of every endpoint.
   */
  async attemptsSince(scope: Scope, since: Date, limit: number): Promise<AttemptSummary[]> {
    if (limit <= 0) return [];
    const sql = this.sql;
    const hooks = (await sql<{ id: string }[]>`${this.hooks(scope, null)} SELECT id FROM hooks`).map(
      (h) => h.id,
    );
    if (hooks.length === 0) return [];
    const streams = sql`unnest(${sql.array(hooks, OID.text)}::text[]) AS h(id)
      CROSS JOIN unnest(${sql.array([...STATUSES], OID.text)}::text[]) AS s(status)`;
    const [newest] = await sql<{ at: Date | null }[]>`
      SELECT max(a.attempted_at) AS at FROM ${streams}
      CROSS JOIN LATERAL (
        SELECT d.attempted_at FROM deliveries AS d
        WHERE d.webhook_id = h.id AND d.status = s.status AND d.attempted_at >= ${since}
          AND ${this.scoped(scope, sql`d`)}
        ORDER BY d.attempted_at DESC
        LIMIT 1
      ) AS a`;
    if (!newest?.at) return [];
    const found: AttemptSummary[] = [];
    let until = newest.at.getTime() + 1;
    let span = Math.max(ATTEMPT_WINDOW_MS, (until - since.getTime()) / 64);
    while (found.length < limit && until > since.getTime()) {
      const from = new Date(Math.max(since.getTime(), until - span));
      const need = limit - found.length;
      const rows = await sql<{ webhook_id: string; status: DeliveryStatus; attempted_at: Date }[]>`
        SELECT a.webhook_id, a.status, a.attempted_at FROM ${streams}
        CROSS JOIN LATERAL (
          SELECT d.webhook_id, d.status, d.attempted_at FROM deliveries AS d
          WHERE d.webhook_id = h.id AND d.status = s.status
            AND d.attempted_at >= ${from} AND d.attempted_at < ${new Date(until)}
            AND ${this.scoped(scope, sql`d`)}
          ORDER BY d.attempted_at DESC
          LIMIT ${need}
        ) AS a
        ORDER BY a.attempted_at DESC
        LIMIT ${need}`;
      for (const r of rows)
        found.push({ webhookId: r.webhook_id, status: r.status, attemptedAt: r.attempted_at });
      until = from.getTime();
      span *= 2;
    }
    return found;
  }

  /** One top-1 probe of `deliveries_webhook_attempted` per endpoint. */
  async lastSuccess(scope: Scope, webhookIds: readonly string[]): Promise<Map<string, Date>> {
    const out = new Map<string, Date>();
    if (webhookIds.length === 0) return out;
    const sql = this.sql;
    const rows = await sql<{ webhook_id: string; attempted_at: Date }[]>`
      ${this.hooks(scope, webhookIds)}
      SELECT h.id AS webhook_id, a.attempted_at FROM hooks AS h
      CROSS JOIN LATERAL (
        SELECT d.attempted_at FROM deliveries AS d
        WHERE d.webhook_id = h.id AND d.status = 'succeeded' AND d.attempted_at IS NOT NULL
          AND ${this.scoped(scope, sql`d`)}
        ORDER BY d.attempted_at DESC
        LIMIT 1
      ) AS a`;
    for (const r of rows) out.set(r.webhook_id, r.attempted_at);
    return out;
  }

  /**
   * Newest first across endpoints: the first `limit + 1` of each endpoint after the cursor, merged. With
   * an event id the event's few records are read through `deliveries_event_webhook` instead.
   */
  async list(
    scope: Scope,
    webhookIds: readonly string[] | null,
    f: DeliveryFilter,
    page: PageRequest,
  ): Promise<Page<Delivery>> {
    const sql = this.sql;
    const n = fetchSize(page);
    if (webhookIds !== null && webhookIds.length === 0) return { data: [], next: null };
    const rows =
      f.eventId !== undefined
        ? await sql<DeliveryRow[]>`SELECT * FROM deliveries AS d
            WHERE ${this.scoped(scope, sql`d`)}
              ${webhookIds === null ? sql`` : sql`AND webhook_id = ANY(${sql.array([...webhookIds], OID.text)}::text[])`}
              ${deliveryFilterSql(sql, f)} ${afterCursor(sql, page.cursor)}
            ${newestFirst(sql)}
            LIMIT ${n}`
        : await sql<DeliveryRow[]>`
            ${this.hooks(scope, webhookIds)}
            SELECT d.* FROM hooks AS h
            CROSS JOIN LATERAL (
              SELECT * FROM deliveries
              WHERE tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId} AND webhook_id = h.id
                ${deliveryFilterSql(sql, f)} ${afterCursor(sql, page.cursor)}
              ${newestFirst(sql)}
              LIMIT ${n}
            ) AS d
            ORDER BY d.created_at DESC, d.id DESC
            LIMIT ${n}`;
    return toPage(rows, page, deliveryFromRow);
  }

  /**
   * The first `limit` created since and the first `limit` attempted since, each merged across the
   * project's endpoints, then ordered by the later of the two times (as the Mongo store does).
   */
  async changedSince(scope: Scope, since: Date, limit: number): Promise<Delivery[]> {
    if (limit <= 0) return [];
    const sql = this.sql;
    const rows = await sql<DeliveryRow[]>`
      ${this.hooks(scope, null)},
      created AS (
        SELECT d.* FROM hooks AS h
        CROSS JOIN LATERAL (
          SELECT * FROM deliveries
          WHERE tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId} AND webhook_id = h.id
            AND created_at >= ${since}
          ORDER BY created_at, id
          LIMIT ${limit}
        ) AS d
        ORDER BY d.created_at, d.id
        LIMIT ${limit}
      ),
      attempted AS (
        SELECT d.* FROM hooks AS h CROSS JOIN unnest(${sql.array([...STATUSES], OID.text)}::text[]) AS s(status)
        CROSS JOIN LATERAL (
          SELECT * FROM deliveries AS x
          WHERE x.webhook_id = h.id AND x.status = s.status AND x.attempted_at >= ${since}
            AND ${this.scoped(scope, sql`x`)}
          ORDER BY x.attempted_at
          LIMIT ${limit}
        ) AS d
        ORDER BY d.attempted_at
        LIMIT ${limit}
      )
      SELECT * FROM (SELECT * FROM created UNION SELECT * FROM attempted) AS u
      ORDER BY greatest(u.created_at, u.attempted_at), u.id
      LIMIT ${limit}`;
    return rows.map(deliveryFromRow);
  }

  /**
   * The project's due rows through `deliveries_due` (only pending rows are in it: the size of the due
   * backlog), or some endpoints' pending rows through `deliveries_webhook_pending`.
   */
  async dueStats(
    scope: Scope,
    now: Date,
    webhookIds?: readonly string[] | null,
  ): Promise<{ count: number; oldestScheduledAt: Date | null }> {
    if (webhookIds != null && webhookIds.length === 0) return { count: 0, oldestScheduledAt: null };
    const sql = this.sql;
    const [row] = await sql<{ count: number; oldest: Date | null }[]>`
      SELECT count(*)::integer AS count, min(d.scheduled_at) AS oldest FROM deliveries AS d
      WHERE d.status = 'pending' AND d.scheduled_at <= ${now} AND ${this.scoped(scope, sql`d`)}
        ${webhookIds == null ? sql`` : sql`AND d.webhook_id = ANY(${sql.array([...webhookIds], OID.text)}::text[])`}`;
    return { count: row?.count ?? 0, oldestScheduledAt: row?.oldest ?? null };
  }
}
