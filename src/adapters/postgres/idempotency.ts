import type { Sql } from "postgres";
import type { IdempotencyRecord, IdempotencyRepository } from "../../app/ports/tokens.ts";
import { texts } from "./rows/arrays.ts";
import { type IdempotencyRow, idempotencyFromRow } from "./rows/tokens.ts";

/** Rounds of the upsert-then-read before giving up (each one lost means the holder vanished in between). */
const ATTEMPTS = 3;

export class PostgresIdempotency implements IdempotencyRepository {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /**
   * One upsert that writes a new key or replaces an expired record, and answers nothing when a live record
   * holds the key (a concurrent first writer is waited for by the insert). That holder is then read by a
   * second statement: the first one's snapshot predates a holder committed while it waited.
   */
  async reserve(record: IdempotencyRecord, notBefore: Date): Promise<IdempotencyRecord> {
    for (let i = 0; i < ATTEMPTS; i++) {
      const [written] = await this.sql<IdempotencyRow[]>`
        INSERT INTO idempotency_keys (scope_key, event_id, fingerprint, created_at)
        VALUES (${record.scopeKey}, ${record.eventId}, ${record.fingerprint}, ${record.createdAt})
        ON CONFLICT (scope_key) DO UPDATE
          SET event_id = excluded.event_id, fingerprint = excluded.fingerprint, created_at = excluded.created_at
          WHERE idempotency_keys.created_at < ${notBefore}
        RETURNING *`;
      if (written) return idempotencyFromRow(written);
      const [held] = await this.sql<IdempotencyRow[]>`
        SELECT * FROM idempotency_keys WHERE scope_key = ${record.scopeKey}`;
      if (held && held.created_at.getTime() >= notBefore.getTime()) return idempotencyFromRow(held);
    }
    throw new Error(`idempotency key ${record.scopeKey} could not be reserved`);
  }

  async find(scopeKey: string, notBefore: Date): Promise<IdempotencyRecord | null> {
    const [held] = await this.sql<IdempotencyRow[]>`
      SELECT * FROM idempotency_keys WHERE scope_key = ${scopeKey} AND created_at >= ${notBefore}`;
    return held ? idempotencyFromRow(held) : null;
  }

  async deleteCreatedBefore(before: Date): Promise<number> {
    return (await this.sql`DELETE FROM idempotency_keys WHERE created_at < ${before}`).count;
  }

  async deleteForEvents(eventIds: readonly string[]): Promise<number> {
    if (eventIds.length === 0) return 0;
    const r = await this.sql`
      DELETE FROM idempotency_keys WHERE event_id = ANY(${texts(this.sql, [...new Set(eventIds)])}::text[])`;
    return r.count;
  }
}
