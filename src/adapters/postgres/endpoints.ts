import type { Sql } from "postgres";
import type { EndpointFilter, EndpointPatch, EndpointRepository } from "../../app/ports/endpoints.ts";
import type { Page, PageRequest, Scope } from "../../app/ports/paging.ts";
import type { DisabledReason, Endpoint } from "../../domain/endpoint.ts";
import type { EventType } from "../../domain/event-catalog.ts";
import { afterCursor, fetchSize, newestFirst, toPage } from "./paging.ts";
import type { ReadCache } from "./read-cache.ts";
import { texts } from "./rows/arrays.ts";
import {
  type EndpointRow,
  endpointColumns,
  endpointFromRow,
  endpointPatchColumns,
} from "./rows/endpoints.ts";

export class PostgresEndpoints implements EndpointRepository {
  /** `cache` keeps each project's subscribers of a type between publishes (ADR 18 says how it stays right). */
  private readonly sql: Sql;
  private readonly cache: ReadCache | null;
  constructor(sql: Sql, cache: ReadCache | null = null) {
    this.sql = sql;
    this.cache = cache;
  }

  /**
   * After a write that changed `rows` rows: this process's cached fan-outs go at once, other processes' when
   * the trigger's notice arrives. A write that found nothing to change keeps the cache.
   */
  private changed(rows: number): void {
    if (rows > 0) this.cache?.changed("endpoints");
  }

  async insert(endpoint: Endpoint): Promise<void> {
    // A taken id fails with a unique violation, as the other stores refuse it.
    await this.sql`INSERT INTO endpoints ${this.sql(endpointColumns(this.sql, endpoint))}`;
    this.changed(1);
  }

  async get(scope: Scope, id: string): Promise<Endpoint | null> {
    const [row] = await this.sql<EndpointRow[]>`
      SELECT * FROM endpoints
      WHERE id = ${id} AND tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}`;
    return row ? endpointFromRow(row) : null;
  }

  /** The engine reads the endpoints of what it sends through this (prepare), one claim at a time: cached too. */
  async getMany(ids: readonly string[]): Promise<Endpoint[]> {
    if (ids.length === 0) return [];
    const byId = new Map<string, Endpoint>();
    const missing: string[] = [];
    for (const id of new Set(ids)) {
      const cached = this.cache?.get<Endpoint>("endpoints", `id\u0000${id}`);
      if (cached !== undefined) byId.set(id, cached);
      else missing.push(id);
    }
    if (missing.length > 0) {
      const readAt = this.cache?.mark() ?? 0;
      const rows = await this.sql<EndpointRow[]>`
        SELECT * FROM endpoints WHERE id = ANY(${texts(this.sql, missing)}::text[])`;
      for (const row of rows) {
        const endpoint = endpointFromRow(row);
        byId.set(row.id, endpoint);
        this.cache?.keep("endpoints", `id\u0000${row.id}`, readAt, endpoint);
      }
    }
    // In the order asked, as the other stores answer.
    return ids.flatMap((id) => {
      const endpoint = byId.get(id);
      return endpoint ? [endpoint] : [];
    });
  }

  async list(scope: Scope, filter: EndpointFilter, page: PageRequest): Promise<Page<Endpoint>> {
    const sql = this.sql;
    const rows = await sql<EndpointRow[]>`
      SELECT * FROM endpoints
      WHERE tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}
        ${filter.enabled === undefined ? sql`` : sql`AND enabled = ${filter.enabled}`}
        ${filter.event === undefined ? sql`` : sql`AND ${filter.event}::text = ANY(events)`}
        ${afterCursor(sql, page.cursor)}
      ${newestFirst(sql)}
      LIMIT ${fetchSize(page)}`;
    return toPage(rows, page, endpointFromRow);
  }

  async listSubscribed(scope: Scope, type: EventType): Promise<Endpoint[]> {
    const read = async () => {
      // The project's endpoints are read by the scope index; the type is checked on those few rows.
      const rows = await this.sql<EndpointRow[]>`
        SELECT * FROM endpoints
        WHERE tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId} AND ${type}::text = ANY(events)`;
      return rows.map(endpointFromRow);
    };
    if (!this.cache) return read();
    const key = `${scope.tenantId}\u0000${scope.projectId}\u0000${type}`;
    return [...(await this.cache.through("endpoints", key, read))];
  }

  async update(scope: Scope, id: string, patch: EndpointPatch): Promise<Endpoint | null> {
    const [row] = await this.sql<EndpointRow[]>`
      UPDATE endpoints SET ${this.sql(endpointPatchColumns(this.sql, patch))}
      WHERE id = ${id} AND tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}
      RETURNING *`;
    this.changed(row ? 1 : 0);
    return row ? endpointFromRow(row) : null;
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    const r = await this.sql`
      DELETE FROM endpoints
      WHERE id = ${id} AND tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}`;
    this.changed(r.count);
    return r.count === 1;
  }

  async markSucceeded(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    // Only rows in a streak are written: a success on a healthy endpoint costs no row version.
    const r = await this.sql`
      UPDATE endpoints SET failing_since = NULL
      WHERE id = ANY(${texts(this.sql, [...new Set(ids)])}::text[]) AND failing_since IS NOT NULL`;
    this.changed(r.count);
  }

  async markFailing(ids: readonly string[], at: Date): Promise<void> {
    if (ids.length === 0) return;
    const r = await this.sql`
      UPDATE endpoints SET failing_since = ${at}, failing_notice = NULL
      WHERE id = ANY(${texts(this.sql, [...new Set(ids)])}::text[]) AND failing_since IS NULL`;
    this.changed(r.count);
  }

  async listUnreported(kind: "failing" | "disabled", before: Date, limit: number): Promise<Endpoint[]> {
    if (limit <= 0) return [];
    // Each read is served by its partial index (migration 0003), which holds only the rows owing an event.
    const rows =
      kind === "failing"
        ? await this.sql<EndpointRow[]>`
            SELECT * FROM endpoints
            WHERE enabled AND failing_since IS NOT NULL AND failing_notice IS NULL AND failing_since <= ${before}
            ORDER BY failing_since
            LIMIT ${limit}`
        : await this.sql<EndpointRow[]>`
            SELECT * FROM endpoints
            WHERE NOT enabled AND disabled_at IS NOT NULL AND disabled_notice IS NULL AND disabled_at <= ${before}
            ORDER BY disabled_at
            LIMIT ${limit}`;
    return rows.map(endpointFromRow);
  }

  async markReported(id: string, kind: "failing" | "disabled", at: Date): Promise<boolean> {
    const r =
      kind === "failing"
        ? await this
            .sql`UPDATE endpoints SET failing_notice = ${at} WHERE id = ${id} AND failing_since = ${at}`
        : await this
            .sql`UPDATE endpoints SET disabled_notice = ${at} WHERE id = ${id} AND disabled_at = ${at}`;
    this.changed(r.count);
    return r.count === 1;
  }

  async listFailingSince(before: Date, limit: number): Promise<Endpoint[]> {
    if (limit <= 0) return [];
    // Read from the partial index endpoints_failing, which holds only enabled endpoints in a streak.
    const rows = await this.sql<EndpointRow[]>`
      SELECT * FROM endpoints
      WHERE enabled AND failing_since IS NOT NULL AND failing_since <= ${before}
      ORDER BY failing_since
      LIMIT ${limit}`;
    return rows.map(endpointFromRow);
  }

  async disable(id: string, reason: DisabledReason, at: Date): Promise<boolean> {
    const r = await this.sql`
      UPDATE endpoints
      SET enabled = false, disabled_reason = ${reason}, updated_at = ${at}, disabled_at = ${at}, disabled_notice = NULL
      WHERE id = ${id} AND enabled`;
    this.changed(r.count);
    return r.count === 1;
  }

  async listFifo(): Promise<string[]> {
    const read = async () =>
      (await this.sql<{ id: string }[]>`SELECT id FROM endpoints WHERE ordering = 'fifo'`).map((r) => r.id);
    // Asked every second by every process's engine (fifo.ts): kept while the cache's channel proves alive.
    return this.cache ? [...(await this.cache.through("endpoints", "\u0000fifo", read))] : read();
  }
}
