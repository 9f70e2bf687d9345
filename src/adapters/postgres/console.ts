import type { Sql } from "postgres";
import type {
  ConsoleSessionKind,
  ConsoleSessionRecord,
  ConsoleSessionRepository,
  DeliveryInsights,
} from "../../app/ports/console.ts";
import type { Scope } from "../../app/ports/paging.ts";
import { PostgresDeliveryInsights } from "./console-insights.ts";
import { guarded } from "./errors.ts";
import { OID } from "./rows/arrays.ts";

/** A row of `console_sessions`. */
interface SessionRow {
  id: string;
  hash: string;
  kind: ConsoleSessionKind;
  tenant_id: string;
  project_id: string;
  webhook_ids: string[] | null;
  csrf_token: string;
  parent_id: string | null;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  revoked_at: Date | null;
}

const fromRow = (r: SessionRow): ConsoleSessionRecord => ({
  id: r.id,
  hash: r.hash,
  kind: r.kind,
  tenantId: r.tenant_id,
  projectId: r.project_id,
  webhookIds: r.webhook_ids,
  csrfToken: r.csrf_token,
  parentId: r.parent_id,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  usedAt: r.used_at,
  revokedAt: r.revoked_at,
});

export class PostgresConsoleSessions implements ConsoleSessionRepository {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  async insert(r: ConsoleSessionRecord): Promise<void> {
    const sql = this.sql;
    await sql`INSERT INTO console_sessions (id, hash, kind, tenant_id, project_id, webhook_ids, csrf_token,
        parent_id, created_at, expires_at, used_at, revoked_at)
      VALUES (${r.id}, ${r.hash}, ${r.kind}, ${r.tenantId}, ${r.projectId},
        ${r.webhookIds === null ? null : sql.array([...r.webhookIds], OID.text)}::text[], ${r.csrfToken},
        ${r.parentId}, ${r.createdAt}, ${r.expiresAt}, ${r.usedAt}, ${r.revokedAt})`;
  }

  async findByHash(hash: string): Promise<ConsoleSessionRecord | null> {
    const [row] = await this.sql<SessionRow[]>`SELECT * FROM console_sessions WHERE hash = ${hash}`;
    return row ? fromRow(row) : null;
  }

  async get(id: string): Promise<ConsoleSessionRecord | null> {
    const [row] = await this.sql<SessionRow[]>`SELECT * FROM console_sessions WHERE id = ${id}`;
    return row ? fromRow(row) : null;
  }

  /** One conditional update: of two concurrent redemptions, the second waits for the first's row lock and then matches nothing. */
  async consume(hash: string, at: Date): Promise<ConsoleSessionRecord | null> {
    const [row] = await this.sql<SessionRow[]>`UPDATE console_sessions SET used_at = ${at}
      WHERE hash = ${hash} AND used_at IS NULL AND revoked_at IS NULL
      RETURNING *`;
    return row ? fromRow(row) : null;
  }

  async revoke(scope: Scope, kind: ConsoleSessionKind, id: string, at: Date): Promise<boolean> {
    const r = await this.sql`UPDATE console_sessions SET revoked_at = ${at}
      WHERE id = ${id} AND tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}
        AND kind = ${kind} AND revoked_at IS NULL`;
    return r.count === 1;
  }

  async deleteExpiredBefore(before: Date): Promise<number> {
    const r = await this.sql`DELETE FROM console_sessions WHERE expires_at < ${before}`;
    return r.count;
  }
}

export interface PostgresConsoleStore {
  sessions: ConsoleSessionRepository;
  insights: DeliveryInsights;
}

/** The console's storage over a Herald database (the schema is the migrations'). Outages become StoreUnavailableError. */
export function createPostgresConsoleStore(sql: Sql): PostgresConsoleStore {
  return {
    sessions: guarded(new PostgresConsoleSessions(sql)),
    insights: guarded(new PostgresDeliveryInsights(sql)),
  };
}
