import type { PendingQuery, Row, Sql } from "postgres";
import type { Liveness, ShardLease, ShardRepository } from "../../app/ports/shards.ts";
import { type Heartbeats, keyGranted, ProcessLocks, type ProofCarrier } from "./process-lock.ts";
import { CACHE_CHANNEL } from "./read-cache.ts";
import { ints, texts, times } from "./rows/arrays.ts";
import { leaseFromRow, type ShardLeaseRow } from "./rows/shards.ts";

type LeaseKey = Pick<ShardLease, "shard" | "generation">;

const keyOf = (l: LeaseKey) => `${l.shard}:${l.generation}`;
const EPOCH = new Date(0);

/**
 * Shard leases decided by the (shard, generation) primary key: of several inserts of one generation, one
 * succeeds, and `ON CONFLICT DO NOTHING RETURNING` tells each taker which it won. Only a lease's owner
 * updates it (renew, give back). Process heartbeats are upserts; a process counts as live while its
 * session lock is held too (process-lock.ts), except on the embedded database, where it is the only one.
 */
export class PostgresShards implements ShardRepository {
  readonly liveness: Liveness;
  private readonly locks: ProcessLocks;

  /**
   * `lockClient` opens the one-connection client that holds this process's lock; without it (a client
   * that cannot be reopened) the heartbeat goes with the leases, as on the memory store.
   */
  private readonly sql: Sql;
  constructor(
    sql: Sql,
    sole = false,
    lockClient: (() => Sql) | null = null,
    beats: Heartbeats | null = null,
  ) {
    this.sql = sql;
    this.liveness = sole ? "sole" : lockClient ? "session" : "lease";
    this.locks = new ProcessLocks(lockClient ?? (() => sql), beats);
  }

  /** ("session") What a publish carries this process's proof of life with (ADR 25, amended); else null. */
  get proofCarrier(): ProofCarrier | null {
    return this.liveness === "session" ? this.locks : null;
  }

  readonly proofs = {
    listen: (heard: (processId: string, began: number) => void): (() => void) => this.locks.onProof(heard),
  };

  /** Closes the lock's connection (the store closing). */
  closeLocks(): Promise<void> {
    return this.locks.close();
  }

  async hold(processId: string): Promise<boolean> {
    if (this.liveness !== "session") return true;
    const unbroken = await this.locks.hold(processId);
    // A new key: the heartbeat row says so at once (the first take comes before the row exists).
    if (!unbroken)
      await this
        .sql`UPDATE processes SET lock_key = ${this.locks.keyOf(processId)}::bigint WHERE id = ${processId}`;
    return unbroken;
  }

  async heads(): Promise<ShardLease[]> {
    const rows = await this.sql<ShardLeaseRow[]>`
      SELECT DISTINCT ON (shard) shard, generation, owner, expires_at FROM shard_leases
      ORDER BY shard, generation DESC`;
    return rows.map(leaseFromRow);
  }

  async acquire(tries: readonly ShardLease[]): Promise<number[]> {
    if (tries.length === 0) return [];
    // In key order, so takers racing for the same shards lock their keys in the same order (no deadlock).
    const sorted = [...new Map(tries.map((t) => [keyOf(t), t])).values()].sort(
      (a, b) => a.shard - b.shard || a.generation - b.generation,
    );
    const sql = this.sql;
    const shards = sorted.map((t) => t.shard);
    const generations = sorted.map((t) => t.generation);
    const owners = sorted.map((t) => t.owner);
    const expiries = sorted.map((t) => t.expiresAt);
    // The generations before a won one protect nothing any more: deleted in the same statement.
    const rows = await sql<LeaseKey[]>`
      WITH won AS (
        INSERT INTO shard_leases (shard, generation, owner, expires_at)
        SELECT * FROM unnest(${ints(sql, shards)}::integer[], ${ints(sql, generations)}::integer[],
          ${texts(sql, owners)}::text[], ${times(sql, expiries)}::timestamptz[])
        ON CONFLICT (shard, generation) DO NOTHING
        RETURNING shard, generation
      ), forgotten AS (
        DELETE FROM shard_leases l USING won WHERE l.shard = won.shard AND l.generation < won.generation
      )
      SELECT shard, generation FROM won`;
    const won = new Set(rows.map(keyOf));
    // In the order asked, each key once.
    const answered = new Set<string>();
    return tries.flatMap((t) => {
      const k = keyOf(t);
      if (!won.has(k) || answered.has(k)) return [];
      answered.add(k);
      return [t.shard];
    });
  }

  async renew(owner: string, leases: readonly LeaseKey[], expiresAt: Date, now: Date): Promise<number[]> {
    return this.setExpiry(owner, leases, expiresAt, this.sql`AND l.expires_at > ${now}`);
  }

  async release(owner: string, leases: readonly LeaseKey[]): Promise<void> {
    await this.setExpiry(owner, leases, EPOCH, this.sql``);
  }

  /** Sets the expiry of the owner's leases of these generations that also meet `also`; answers their shards. */
  private async setExpiry(
    owner: string,
    leases: readonly LeaseKey[],
    expiresAt: Date,
    also: PendingQuery<Row[]>,
  ): Promise<number[]> {
    if (leases.length === 0) return [];
    const sql = this.sql;
    const shards = leases.map((k) => k.shard);
    const generations = leases.map((k) => k.generation);
    const rows = await sql<{ shard: number }[]>`
      UPDATE shard_leases l SET expires_at = ${expiresAt}
      FROM unnest(${ints(sql, shards)}::integer[], ${ints(sql, generations)}::integer[]) AS k(shard, generation)
      WHERE l.shard = k.shard AND l.generation = k.generation AND l.owner = ${owner} ${also}
      RETURNING l.shard`;
    return rows.map((r) => r.shard);
  }

  async beat(processId: string, expiresAt: Date): Promise<void> {
    const key = this.liveness === "session" ? this.locks.keyOf(processId) : null;
    await this.sql`
      INSERT INTO processes (id, expires_at, lock_key) VALUES (${processId}, ${expiresAt}, ${key}::bigint)
      ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, lock_key = excluded.lock_key`;
  }

  async live(now: Date): Promise<string[]> {
    const rows = await this.sql<{ id: string }[]>`SELECT p.id FROM processes p WHERE ${this.alive(now)}`;
    return rows.map((r) => r.id);
  }

  /**
   * One statement: the heads' rows, then a row per live process (only `live_id` set), then with
   * `processId` one row whose `mine` says whether its lock is held (the proof of life's check in the
   * same read; it carries the read cache's heartbeat as the check does).
   */
  async round(
    now: Date,
    processId?: string,
  ): Promise<{ heads: ShardLease[]; live: string[]; proven?: boolean }> {
    const sql = this.sql;
    const key = processId === undefined ? null : this.locks.heldKey(processId);
    const beat = key === null ? null : this.locks.nextBeat();
    const began = performance.now();
    const mine =
      key === null
        ? sql``
        : sql`UNION ALL SELECT NULL, NULL, NULL, NULL, NULL,
            ${keyGranted(sql, sql`${key}::bigint`)},
            ${beat === null ? sql`NULL` : sql`pg_notify(${CACHE_CHANNEL}, ${beat})::text`}`;
    const rows = await sql<(ShardLeaseRow & { live_id: string | null; mine: boolean | null })[]>`
      SELECT * FROM (
        SELECT DISTINCT ON (shard) shard, generation, owner, expires_at, NULL::text AS live_id,
          NULL::boolean AS mine, NULL::text AS beat
        FROM shard_leases ORDER BY shard, generation DESC
      ) h
      UNION ALL
      SELECT NULL, NULL, NULL, NULL, p.id, NULL, NULL FROM processes p WHERE ${this.alive(now)}
      ${mine}`.catch((e) => {
      if (beat !== null) this.locks.beatLost(beat);
      throw e;
    });
    const heads: ShardLease[] = [];
    const live: string[] = [];
    let proven: boolean | undefined;
    for (const r of rows) {
      if (r.mine !== null) proven = r.mine;
      else if (r.live_id === null) heads.push(leaseFromRow(r));
      else live.push(r.live_id);
    }
    if (proven) this.locks.saw(began);
    return { heads, live, proven };
  }

  /** A process counted live at `now`: its heartbeat runs ("session": and its proof of life is held). */
  private alive(now: Date) {
    const sql = this.sql;
    const locked =
      this.liveness === "session"
        ? sql`AND (p.lock_key IS NULL OR ${keyGranted(sql, sql`p.lock_key`)})`
        : sql``;
    return sql`p.expires_at > ${now} ${locked}`;
  }

  async leave(processId: string): Promise<void> {
    try {
      await this.sql`DELETE FROM processes WHERE id = ${processId}`;
    } finally {
      await this.locks.end(processId);
    }
  }
}
