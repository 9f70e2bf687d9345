import type { Liveness, ShardLease, ShardRepository } from "../../app/ports/shards.ts";

const key = (shard: number, generation: number) => `${shard}:${generation}`;

/** Shard leases and heartbeats in memory: the twin of the MongoDB adapter (one process, or tests). */
export class MemoryShards implements ShardRepository {
  readonly leases = new Map<string, ShardLease>();
  readonly processes = new Map<string, Date>();
  /** Tests of several processes on one memory store move a manual clock: heartbeats go with the leases. */
  readonly liveness: Liveness = "lease";

  async hold(_processId: string): Promise<boolean> {
    return true;
  }

  async heads(): Promise<ShardLease[]> {
    const newest = new Map<number, ShardLease>();
    for (const l of this.leases.values()) {
      const seen = newest.get(l.shard);
      if (!seen || l.generation > seen.generation) newest.set(l.shard, l);
    }
    return [...newest.values()].map((l) => ({ ...l, expiresAt: new Date(l.expiresAt) }));
  }

  async acquire(tries: readonly ShardLease[]): Promise<number[]> {
    const won: number[] = [];
    for (const t of tries) {
      if (this.leases.has(key(t.shard, t.generation))) continue;
      this.leases.set(key(t.shard, t.generation), { ...t, expiresAt: new Date(t.expiresAt) });
      won.push(t.shard);
    }
    for (const [k, l] of this.leases) {
      const newest = this.leases.get(key(l.shard, l.generation + 1));
      if (newest && won.includes(l.shard)) this.leases.delete(k);
    }
    return won;
  }

  async renew(
    owner: string,
    leases: readonly Pick<ShardLease, "shard" | "generation">[],
    expiresAt: Date,
    now: Date,
  ): Promise<number[]> {
    const renewed: number[] = [];
    for (const l of leases) {
      const held = this.leases.get(key(l.shard, l.generation));
      if (held?.owner !== owner || held.expiresAt.getTime() <= now.getTime()) continue;
      held.expiresAt = new Date(expiresAt);
      renewed.push(l.shard);
    }
    return renewed;
  }

  async release(owner: string, leases: readonly Pick<ShardLease, "shard" | "generation">[]) {
    for (const l of leases) {
      const held = this.leases.get(key(l.shard, l.generation));
      if (held?.owner === owner) held.expiresAt = new Date(0);
    }
  }

  async beat(processId: string, expiresAt: Date): Promise<void> {
    this.processes.set(processId, new Date(expiresAt));
  }

  async live(now: Date): Promise<string[]> {
    return [...this.processes].filter(([, until]) => until.getTime() > now.getTime()).map(([id]) => id);
  }

  async leave(processId: string): Promise<void> {
    this.processes.delete(processId);
  }
}
