import type { Sql } from "postgres";
import type {
  ErasureRecord,
  ErasureRepository,
  ProjectSettings,
  SettingsRepository,
} from "../../app/ports/erasures.ts";
import type { Page, PageRequest, Scope } from "../../app/ports/paging.ts";
import { afterCursor, fetchSize, newestFirst, toPage } from "./paging.ts";
import {
  type ErasureRow,
  erasureFromRow,
  erasureToRow,
  type ProjectSettingsRow,
  settingsFromRow,
  settingsToRow,
} from "./rows/erasures.ts";

export class PostgresErasures implements ErasureRepository {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async insert(record: ErasureRecord): Promise<void> {
    // A repeat of the same insert (a retried request) leaves the first one.
    await this.sql`INSERT INTO erasures ${this.sql(erasureToRow(record))} ON CONFLICT (id) DO NOTHING`;
  }

  async get(scope: Scope, id: string): Promise<ErasureRecord | null> {
    const [row] = await this.sql<ErasureRow[]>`
      SELECT * FROM erasures
      WHERE id = ${id} AND tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}`;
    return row ? erasureFromRow(row) : null;
  }

  async list(scope: Scope, page: PageRequest): Promise<Page<ErasureRecord>> {
    const sql = this.sql;
    const rows = await sql<ErasureRow[]>`
      SELECT * FROM erasures
      WHERE tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId} ${afterCursor(sql, page.cursor)}
      ${newestFirst(sql)}
      LIMIT ${fetchSize(page)}`;
    return toPage(rows, page, erasureFromRow);
  }

  async deleteCreatedBefore(before: Date, scope?: Scope): Promise<number> {
    const sql = this.sql;
    const r = await sql`
      DELETE FROM erasures WHERE created_at < ${before}
      ${scope ? sql`AND tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}` : sql``}`;
    return r.count;
  }
}

export class PostgresSettings implements SettingsRepository {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async get(scope: Scope): Promise<ProjectSettings | null> {
    const [row] = await this.sql<ProjectSettingsRow[]>`
      SELECT * FROM project_settings WHERE tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}`;
    return row ? settingsFromRow(row) : null;
  }

  async put(settings: ProjectSettings): Promise<void> {
    await this.sql`
      INSERT INTO project_settings ${this.sql(settingsToRow(settings))}
      ON CONFLICT (tenant_id, project_id) DO UPDATE
        SET retention_ms = excluded.retention_ms, updated_at = excluded.updated_at`;
  }

  async withRetention(): Promise<ProjectSettings[]> {
    const rows = await this.sql<ProjectSettingsRow[]>`
      SELECT * FROM project_settings WHERE retention_ms IS NOT NULL`;
    return rows.map(settingsFromRow);
  }
}
