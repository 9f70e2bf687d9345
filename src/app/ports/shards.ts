// Ownership of endpoint shards (ADR 9): leases with generations, and process heartbeats.

/** One generation of one shard's lease. Generation n+1 exists only once n has ended or expired. */
export interface ShardLease {
  shard: number;
  generation: number;
  owner: string;
  /** The epoch for a lease given back (graceful stop, rebalancing). */
  expiresAt: Date;
}

/**
 * How the store tells that a process died, beyond its heartbeat's expiry (ADR 25):
 * - "session": the store ends a process's proof of life with its connection (PostgreSQL: a session-level
 *   advisory lock held on a connection of its own). `hold` keeps it; `live` leaves out processes whose
 *   proof is gone, at once after a crash.
 * - "heartbeat": only by heartbeats (MongoDB): the engine beats often, with a short expiry.
 * - "lease": heartbeats written with the lease renewals (memory: one process, or tests of several).
 * - "sole": only this process can use the database (the embedded PostgreSQL's pid lock), so every other
 *   owner is a predecessor that has died.
 */
export type Liveness = "session" | "heartbeat" | "lease" | "sole";

export interface ShardRepository {
  readonly liveness: Liveness;
  /**
   * ("session") Holds the process's proof of life, taking it if it is not held. Answers true when it was
   * held without a break since the last call that answered; false when it had to be taken (the first
   * time, or after its connection was lost: others may have seen the process dead meanwhile). Rejects
   * when it cannot be held now. Other kinds answer true.
   */
  hold(processId: string): Promise<boolean>;
  /** The newest generation of every shard that was ever leased. */
  heads(): Promise<ShardLease[]>;
  /**
   * `heads()` and `live(now)` in one read, where the store can (each process makes this read every
   * ownership round, whatever its load: with ten processes, one statement less a round counts).
   * ("session") With `processId`, `proven` says whether that process's proof of life was held as the read
   * began, by the session that took it (each take draws a new key): a proof as good as `hold` answering
   * true, so the round stands in for a check (liveness.ts).
   */
  round?(now: Date, processId?: string): Promise<{ heads: ShardLease[]; live: string[]; proven?: boolean }>;
  /**
   * ("session") Proofs of life that statements sent anyway (a publish) carried: `listen` calls `heard`
   * each time one saw a process's proof held by the session that took it, with when that statement began
   * (monotonic ms, performance.now()), until the function it answers is called. A proof as good as the
   * round's `proven` (ADR 25, amended). An object, not a method: nothing here waits on the database.
   */
  readonly proofs?: { listen(heard: (processId: string, began: number) => void): () => void };
  /**
   * Inserts each lease; one insert per (shard, generation) can succeed, whoever tries, on every
   * backend. Answers the shards won; older generations of those shards are forgotten.
   */
  acquire(leases: readonly ShardLease[]): Promise<number[]>;
  /**
   * Moves the expiry of the owner's leases of these generations that have not expired at `now`, and
   * answers their shards. An expired lease is not renewed: another process may be taking that shard over
   * (its next generation), so the owner must count it as lost.
   */
  renew(
    owner: string,
    leases: readonly Pick<ShardLease, "shard" | "generation">[],
    expiresAt: Date,
    now: Date,
  ): Promise<number[]>;
  /** Ends the owner's leases of these generations at once, so another process can take the shards now. */
  release(owner: string, leases: readonly Pick<ShardLease, "shard" | "generation">[]): Promise<void>;
  /** Announces a live process until `expiresAt` (on "session" stores, while its proof is held too). */
  beat(processId: string, expiresAt: Date): Promise<void>;
  /** Processes whose heartbeat has not expired at `now` ("session": and whose proof of life is held). */
  live(now: Date): Promise<string[]>;
  /** Removes a process's heartbeat and gives up its proof of life (a stop). */
  leave(processId: string): Promise<void>;
}
