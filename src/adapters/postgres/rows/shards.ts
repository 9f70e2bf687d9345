// A shard's lease as the `shard_leases` table holds it.
import type { ShardLease } from "../../../app/ports/shards.ts";

export interface ShardLeaseRow {
  shard: number;
  generation: number;
  owner: string;
  expires_at: Date;
}

export const leaseFromRow = (r: ShardLeaseRow): ShardLease => ({
  shard: r.shard,
  generation: r.generation,
  owner: r.owner,
  expiresAt: r.expires_at,
});
