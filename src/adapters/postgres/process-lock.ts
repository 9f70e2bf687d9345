import type { PendingQuery, Row, Sql } from "postgres";
import { CACHE_CHANNEL, type ReadCache } from "./read-cache.ts";

/** What a check carries for the read cache (ReadCache.nextBeat). */
export type Heartbeats = Pick<ReadCache, "nextBeat" | "beatLost">;

/** A check of the lock that takes longer than this ends its connection: a silent one would hang forever. */
const CHECK_DEADLINE_MS = 5_000;
/**
 * A statement sent anyway carries the proof once the last one is this old: below the 450 ms after which
 * the engine checks on the lock's own connection (liveness.ts), so a publish in between goes first.
 */
const CARRY_AFTER_MS = 300;

/** A proof of life a statement sent anyway carries (ADR 25, amended): whose, its key, when it began. */
export interface CarriedProof {
  processId: string;
  key: string;
  /** performance.now() as the statement was sent. */
  began: number;
  /** A read cache heartbeat it carries too, as the checks it stands in for did (ADR 30); null: none. */
  beat: string | null;
}

/** What a statement sent anyway (a publish) asks to carry this process's proof of life when one is wanted. */
export interface ProofCarrier {
  /** The proof to carry in a statement about to be sent; null when none is wanted yet or no lock is held. */
  carry(): CarriedProof | null;
  /**
   * The statement that carried `proof` answered whether its key was granted; null when it failed or
   * answered no row (its lookup and heartbeat never ran).
   */
  carried(proof: CarriedProof, held: boolean | null): void;
}

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
export class ProcessLocks implements ProofCarrier {
  /** The key and the backend pid of the session holding each process id's lock. */
  private readonly held = new Map<string, { key: string; pid: number }>();
  /** Every take draws a new key: a stale session holding an older one neither blocks nor stands in. */
  private takes = 0;
  private readonly lastKey = new Map<string, string>();
  private client: Sql | null = null;
  /** When (performance.now()) the last statement that saw a lock of this client held began. */
  private provenAt = Number.NEGATIVE_INFINITY;
  private readonly proofListeners = new Set<(processId: string, began: number) => void>();

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
    const began = performance.now();
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
      if (now?.pid === lock.pid && now.held) {
        this.saw(began);
        return true;
      }
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
    this.saw(began);
    return false;
  }

  /** A statement that began at `began` (performance.now()) saw this client's lock held (a check, a round). */
  saw(began: number): void {
    this.provenAt = Math.max(this.provenAt, began);
  }

  carry(): CarriedProof | null {
    // One process's lock on this client (a server; tests may run several): the statement proves it alone.
    if (this.held.size !== 1) return null;
    const began = performance.now();
    if (began - this.provenAt < CARRY_AFTER_MS) return null;
    const [processId, { key }] = [...this.held][0]!;
    return { processId, key, began, beat: this.nextBeat() };
  }

  carried(proof: CarriedProof, held: boolean | null): void {
    if (held === null && proof.beat !== null) this.beatLost(proof.beat);
    // Not granted, or taken again meanwhile under a new key: no proof (a check tells a break).
    if (!held || this.held.get(proof.processId)?.key !== proof.key) return;
    this.saw(proof.began);
    for (const heard of this.proofListeners) heard(proof.processId, proof.began);
  }

  /** Calls `heard` for each carried proof that held, until the returned function is called. */
  onProof(heard: (processId: string, began: number) => void): () => void {
    this.proofListeners.add(heard);
    return () => this.proofListeners.delete(heard);
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

/** Whether the advisory lock of bigint `key` (an SQL fragment) is granted to any session (lockOf). */
export function keyGranted(sql: Sql, key: PendingQuery<Row[]>) {
  return sql`EXISTS (SELECT 1 FROM pg_locks l WHERE ${lockOf(sql, key)})`;
}

/**
 * Columns for a statement's select list: `proof`, whether the carried proof's key is granted, and its
 * heartbeat sent; nothing when none is carried. Uncorrelated, each runs once however many rows.
 */
export function proofColumns(sql: Sql, proof: CarriedProof | null) {
  if (proof === null) return sql``;
  const beat =
    proof.beat === null ? sql`` : sql`, (SELECT pg_notify(${CACHE_CHANNEL}, ${proof.beat}))::text AS beat`;
  return sql`, ${keyGranted(sql, sql`${proof.key}::bigint`)} AS proof${beat}`;
}
