import type { Collection } from "mongodb";
import type { LeaseDoc } from "./documents.ts";
import { insertIgnoringDuplicates } from "./errors.ts";

/** A delivery seen as claimable, with the lease generation its record last showed. */
export interface Candidate {
  id: string;
  version: number;
}

/** A generation won: this claim alone holds it. */
export interface Won {
  id: string;
  generation: number;
}

const leaseId = (deliveryId: string, generation: number) => `${deliveryId}:${generation}`;

/**
 * Lease generations, decided by unique inserts. Conditional updates are not atomic on FerretDB v1 (it
 * reads, then writes the whole document), so two claimers could both "win" an updateMany; an insert
 * with a taken _id fails on every backend, so exactly one claimer gets each generation.
 */
export class LeaseLedger {
  constructor(private readonly col: Collection<LeaseDoc>) {}

  /** Tries generation version+1 for each candidate; answers the ones won, in the candidates' order. */
  async acquire(candidates: readonly Candidate[], owner: string, now: Date, expiresAt: Date): Promise<Won[]> {
    const tries = candidates.map((c) => ({ id: c.id, generation: c.version + 1 }));
    const refused = await this.insert(tries, owner, now, expiresAt);
    const won = tries.filter((_, i) => !refused.has(i));
    if (refused.size === 0) return won;
    const healed = await this.heal(
      tries.filter((_, i) => refused.has(i)).map((t) => t.id),
      owner,
      now,
      expiresAt,
    );
    return [...won, ...healed];
  }

  /**
   * A refused generation is normally held by a concurrent claimer, and stays theirs. But a record's
   * version can lag behind its newest lease (a FerretDB lost update); then the newest lease has expired
   * and the delivery would be stuck, so the next generation after the newest lease is tried instead.
   */
  private async heal(ids: readonly string[], owner: string, now: Date, expiresAt: Date): Promise<Won[]> {
    const leases = await this.col
      .find({ delivery_id: { $in: [...ids] } })
      .project<Pick<LeaseDoc, "delivery_id" | "generation" | "expires_at">>({
        _id: 0,
        delivery_id: 1,
        generation: 1,
        expires_at: 1,
      })
      .toArray();
    const newest = new Map<string, Pick<LeaseDoc, "generation" | "expires_at">>();
    for (const l of leases) {
      const seen = newest.get(l.delivery_id);
      if (!seen || l.generation > seen.generation) newest.set(l.delivery_id, l);
    }
    const tries: Won[] = [];
    for (const [id, l] of newest) {
      if (l.expires_at.getTime() <= now.getTime()) tries.push({ id, generation: l.generation + 1 });
    }
    if (tries.length === 0) return [];
    const refused = await this.insert(tries, owner, now, expiresAt);
    return tries.filter((_, i) => !refused.has(i));
  }

  private insert(tries: readonly Won[], owner: string, now: Date, expiresAt: Date): Promise<Set<number>> {
    const docs: LeaseDoc[] = tries.map((t) => ({
      _id: leaseId(t.id, t.generation),
      delivery_id: t.id,
      generation: t.generation,
      owner,
      expires_at: expiresAt,
      created_at: now,
    }));
    return insertIgnoringDuplicates(() => this.col.insertMany(docs, { ordered: false }));
  }

  /** Forgets leases that ended before the moment; an expired generation protects nothing any more. */
  async deleteExpiredBefore(before: Date): Promise<void> {
    await this.col.deleteMany({ expires_at: { $lt: before } });
  }
}
