import type { Collection } from "mongodb";
import type { Liveness, ShardLease, ShardRepository } from "../../app/ports/shards.ts";
import type { ProcessDoc, ShardLeaseDoc } from "./documents/shards.ts";
import { insertIgnoringDuplicates } from "./errors.ts";

const leaseId = (shard: number, generation: number) => `${shard}:${generation}`;
const EPOCH = new Date(0);

/**
 * Shard leases decided by unique inserts (FerretDB v1 does not make conditional updates atomic, an
 * insert of a taken _id fails everywhere), and process heartbeats. Only a lease's owner updates it.
 */
export class MongoShards implements ShardRepository {
  /** No session outlives its connection usably here (no locks, no transactions on FerretDB v1): heartbeats. */
  readonly liveness: Liveness = "heartbeat";
  private readonly leases: Collection<ShardLeaseDoc>;
  private readonly processes: Collection<ProcessDoc>;

  constructor(leases: Collection<ShardLeaseDoc>, processes: Collection<ProcessDoc>) {
    this.leases = leases;
    this.processes = processes;
  }

  async hold(): Promise<boolean> {
    return true;
  }

  async heads(): Promise<ShardLease[]> {
    // One batch (see MongoDeliveries.due): a few hundred small documents.
    const docs = await this.leases.find({}).batchSize(10_000).toArray();
    const newest = new Map<number, ShardLeaseDoc>();
    for (const d of docs) {
      const seen = newest.get(d.shard);
      if (!seen || d.generation > seen.generation) newest.set(d.shard, d);
    }
    return [...newest.values()].map((d) => ({
      shard: d.shard,
      generation: d.generation,
      owner: d.owner,
      expiresAt: d.expires_at,
    }));
  }

  async acquire(tries: readonly ShardLease[]): Promise<number[]> {
    if (tries.length === 0) return [];
    const refused = await insertIgnoringDuplicates(() =>
      this.leases.insertMany(
        tries.map((t) => ({
          _id: leaseId(t.shard, t.generation),
          shard: t.shard,
          generation: t.generation,
          owner: t.owner,
          expires_at: t.expiresAt,
        })),
        { ordered: false },
      ),
    );
    const won = tries.filter((_, i) => !refused.has(i));
    // The generation before a won one protects nothing any more.
    const old = won.filter((t) => t.generation > 1).map((t) => leaseId(t.shard, t.generation - 1));
    if (old.length > 0) await this.leases.deleteMany({ _id: { $in: old } });
    return won.map((t) => t.shard);
  }

  async renew(
    owner: string,
    leases: readonly Pick<ShardLease, "shard" | "generation">[],
    expiresAt: Date,
    now: Date,
  ): Promise<number[]> {
    if (leases.length === 0) return [];
    const ids = leases.map((l) => leaseId(l.shard, l.generation));
    await this.leases.updateMany(
      { _id: { $in: ids }, owner, expires_at: { $gt: now } },
      { $set: { expires_at: expiresAt } },
    );
    // An update answers how many it changed, not which: the renewed ones carry this renewal's expiry.
    const renewed = await this.leases
      .find({ _id: { $in: ids }, owner, expires_at: expiresAt }, { projection: { shard: 1 } })
      .toArray();
    return renewed.map((d) => d.shard);
  }

  async release(owner: string, leases: readonly Pick<ShardLease, "shard" | "generation">[]) {
    if (leases.length === 0) return;
    await this.leases.updateMany(
      { _id: { $in: leases.map((l) => leaseId(l.shard, l.generation)) }, owner },
      { $set: { expires_at: EPOCH } },
    );
  }

  async beat(processId: string, expiresAt: Date): Promise<void> {
    await this.processes.updateOne({ _id: processId }, { $set: { expires_at: expiresAt } }, { upsert: true });
  }

  async live(now: Date): Promise<string[]> {
    const docs = await this.processes
      .find({ expires_at: { $gt: now } }, { projection: { _id: 1 } })
      .toArray();
    return docs.map((d) => d._id);
  }

  async leave(processId: string): Promise<void> {
    await this.processes.deleteOne({ _id: processId });
  }
}
