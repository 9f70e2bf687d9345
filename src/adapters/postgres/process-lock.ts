import type { PendingQuery, ReservedSql, Row, Sql } from "postgres";

/**
 * A process's proof of life on PostgreSQL (ADR 25): a session-level advisory lock, keyed by
 * hashtextextended(process id), held on a connection reserved for it. The server ends the lock with
 * the session: at once when the process dies (its socket closes), after the keepalives below when its
 * host vanishes. Others read `pg_locks` (`LOCK_HELD`) to tell a live owner from a dead one.
 */
export class ProcessLocks {
  private readonly held = new Map<string, { conn: ReservedSql; pid: number }>();

  constructor(private readonly sql: Sql) {}

  /** See ShardRepository.hold. */
  async hold(processId: string): Promise<boolean> {
    const lock = this.held.get(processId);
    if (lock) {
      let rows: { pid: number; held: boolean }[];
      try {
        rows = await lock.conn<{ pid: number; held: boolean }[]>`
          SELECT pg_backend_pid() AS pid, EXISTS (
            SELECT 1 FROM pg_locks l
            WHERE l.pid = pg_backend_pid() AND ${lockOf(lock.conn, lock.conn`hashtextextended(${processId}, 0)`)}
          ) AS held`;
      } catch (e) {
        this.drop(processId);
        throw e;
      }
      // The same session still holds it: nobody can have seen this process dead.
      if (rows[0]?.pid === lock.pid && rows[0].held) return true;
      // A new session behind the reserved connection (the old one ended): the lock was free meanwhile.
      this.drop(processId);
    }
    const conn = await this.sql.reserve();
    try {
      // A vanished host's session (and lock) ends after ~16 s of silence instead of the system's hours.
      const [got] = await conn<{ pid: number; got: boolean }[]>`
        SELECT pg_backend_pid() AS pid, pg_try_advisory_lock(hashtextextended(${processId}, 0)) AS got,
          set_config('tcp_keepalives_idle', '10', false), set_config('tcp_keepalives_interval', '2', false),
          set_config('tcp_keepalives_count', '3', false)`;
      if (!got?.got)
        throw new Error(
          "this process's liveness lock is held by another session (an earlier one not yet ended)",
        );
      this.held.set(processId, { conn, pid: got.pid });
      return false;
    } catch (e) {
      conn.release();
      throw e;
    }
  }

  /** Gives the lock up (a stop); the connection goes back to the pool. */
  async end(processId: string): Promise<void> {
    const lock = this.held.get(processId);
    if (!lock) return;
    this.held.delete(processId);
    try {
      await lock.conn`SELECT pg_advisory_unlock(hashtextextended(${processId}, 0))`;
    } finally {
      lock.conn.release();
    }
  }

  private drop(processId: string) {
    const lock = this.held.get(processId);
    this.held.delete(processId);
    lock?.conn.release();
  }
}

/**
 * The condition on `pg_locks l` that the advisory lock of bigint `key` (an SQL fragment) is granted in
 * this database. A bigint key shows as its high half in classid, its low half in objid, objsubid 1.
 */
export function lockOf(sql: Sql, key: PendingQuery<Row[]>) {
  return sql`l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid = ((${key} >> 32) & 4294967295)::oid AND l.objid = (${key} & 4294967295)::oid`;
}
