import type { PendingQuery, Row, Sql } from "postgres";
import { CACHE_CHANNEL, type ReadCache } from "./read-cache.ts";

/** What a check carries for the read cache (ReadCache.nextBeat). */
export type Heartbeats = Pick<ReadCache, "nextBeat" | "beatLost">;

/** A check of the lock that takes longer than this ends its connection: a silent one would hang forever. */
const CHECK_DEADLINE_MS = 5_000;

/**
 * A process's proof of life on PostgreSQL (ADR 25): a session-level advisory lock, its key drawn anew
 * at each take (hashtextextended of the process id and a count) and written in the process's heartbeat
 * row, held on a connection of its own. The server ends the lock with the
 * session: at once when the process dies (its socket closes), after the keepalives below when its host
 * vanishes. Others read `pg_locks` (`lockOf`) to tell a live owner from a dead one.
 *
 * The connection is a client of one connection (`open`), not a `sql.reserve()`d one: postgres.js throws
 * an uncatchable error on the next query of a reserved connection whose backend died
 * (porsager/postgres#1208), while a client's pool replaces a dead connection. A replaced connection is a
 * new session without the lock: its new backend pid tells it.
 */
export class ProcessLocks {
  /** The key and the backend pid of the session holding each process id's lock. */
  private readonly held = new Map<string, { key: string; pid: number }>();
  /** Every take draws a new key: a stale session holding an older one neither blocks nor stands in. */
  private takes = 0;
  private readonly lastKey = new Map<string, string>();
  private client: Sql | null = null;

  private readonly open: () => Sql;
  private readonly beats: Heartbeats | null;
  /** `beats`: the read cache's heartbeats, carried by the checks (a proof of the channel at no statement's cost). */
  constructor(open: () => Sql, beats: Heartbeats | null = null) {
    this.open = open;
    this.beats = beats;
  }

  /** See ShardRepository.hold. */
  async hold(processId: string): Promise<boolean> {
    if (!this.client) this.client = this.open();
    const client = this.client;
    const lock = this.held.get(processId);
    if (lock !== undefined) {
      const beat = this.beats?.nextBeat() ?? null;
      const [now] = await this.within(client<{ pid: number; held: boolean }[]>`
        SELECT pg_backend_pid() AS pid, EXISTS (
          SELECT 1 FROM pg_locks l WHERE l.pid = pg_backend_pid() AND ${lockOf(client, client`${lock.key}::bigint`)}
        ) AS held${beat === null ? client`` : client`, pg_notify(${CACHE_CHANNEL}, ${beat})`}`).catch((e) => {
        if (beat !== null) this.beats?.beatLost(beat);
        throw e;
      });
      // The same session still holds it: nobody can have seen this process dead.
      if (now?.pid === lock.pid && now.held) return true;
      // A new session (the old one ended): every lock it held went with it.
      for (const [id, l] of this.held) if (l.pid === lock.pid) this.held.delete(id);
    }
    // A vanished host's session (and lock) ends after ~16 s of silence instead of the system's hours.
    const [got] = await this.within(client<{ pid: number; key: string; got: boolean }[]>`
      SELECT pg_backend_pid() AS pid, k.key::text AS key, pg_try_advisory_lock(k.key) AS got,
        set_config('tcp_keepalives_idle', '10', false), set_config('tcp_keepalives_interval', '2', false),
        set_config('tcp_keepalives_count', '3', false)
      FROM (SELECT hashtextextended(${`${processId}:${++this.takes}`}, 0) AS key) k`);
    if (!got?.got) throw new Error("this process's liveness lock is taken by another session (a key clash)");
    this.held.set(processId, { key: got.key, pid: got.pid });
    this.lastKey.set(processId, got.key);
    return false;
  }

  /** The key of the process's lock while this client holds it (as far as it knows), as text; else null. */
  heldKey(processId: string): string | null {
    return this.held.get(processId)?.key ?? null;
  }

  /** A read cache heartbeat for another statement to carry (see Heartbeats), or null. */
  nextBeat(): string | null {
    return this.beats?.nextBeat() ?? null;
  }

  beatLost(beat: string): void {
    this.beats?.beatLost(beat);
  }

  /** The key of the process's lock as last taken (held or not), as text; null before the first take. */
  keyOf(processId: string): string | null {
    return this.held.get(processId)?.key ?? this.lastKey.get(processId) ?? null;
  }

  /** Gives the lock up (a stop); the connection closes once no lock is left on it. */
  async end(processId: string): Promise<void> {
    const lock = this.held.get(processId);
    this.lastKey.delete(processId);
    if (!lock || !this.held.delete(processId) || !this.client) return;
    const client = this.client;
    try {
      await this.within(client`SELECT pg_advisory_unlock(${lock.key}::bigint)`);
    } finally {
      if (this.held.size === 0) await this.close();
    }
  }

  /** Closes the connection (and with it every lock on it). */
  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.held.clear();
    await client?.end({ timeout: 1 }).catch(() => {});
  }

  /**
   * The query's answer, or a failure that also ends the connection: after CHECK_DEADLINE_MS, and on any
   * error. A failed check leaves the proof in doubt anyway (the caller counts it broken), and postgres.js
   * 3.4.9 can leave a connection that closed with a write pending unable to connect again, every attempt
   * ending in CONNECT_TIMEOUT (ADR 10): kept, this client would never hold the lock again and the process
   * would own no shard for as long as it runs. The next check opens a fresh client.
   */
  private async within<T>(query: Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await Promise.race([
        query,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error("the liveness lock's connection does not answer")),
            CHECK_DEADLINE_MS,
          );
        }),
      ]);
    } catch (e) {
      void this.close();
      throw e;
    } finally {
      clearTimeout(timer);
    }
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
