// Ownership of endpoint shards (ADR 9): leases with generations, and process heartbeats.

/** One generation of one shard's lease. Generation n+1 exists only once n has ended or expired. */
export interface ShardLease {
  shard: number;
  generation: number;
  owner: string;
  /** The epoch for a lease given back (graceful stop, rebalancing). */
  expiresAt: Date;
}

export interface ShardRepository {
  /** The newest generation of every shard that was ever leased. */
  heads(): Promise<ShardLease[]>;
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
  /** Announces a live process until `expiresAt`. */
  beat(processId: string, expiresAt: Date): Promise<void>;
  /** Processes whose heartbeat has not expired at `now`. */
  live(now: Date): Promise<string[]>;
  /** Removes a process's heartbeat (graceful stop). */
  leave(processId: string): Promise<void>;
}
