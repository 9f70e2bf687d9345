import { SHARD_COUNT } from "../../domain/shards.ts";

/** One shard lease this process holds. */
export interface Held {
  generation: number;
  /** Monotonic ms after which this process no longer claims from the shard unless it renewed. */
  validUntil: number;
  /**
   * A moment (wall-clock ms) before which every send of the previous owner started: the round read
   * the shard as given back or expired by then. Rate limits rely on it (ADR 16).
   */
  since: number;
  /** Monotonic ms before which no send starts (a dead owner's shard: its sends may still be starting). */
  notBefore: number;
}

/** What the proof of life says (`liveness.ts`): no send starts while it is not valid. */
export interface ProofOfLife {
  valid(): boolean;
  readonly validUntil: number;
}

/**
 * The shard leases this process holds and those it is giving back, and what they let it claim from
 * (ADR 9). The rounds (renewal, the ownership round, giving back) change them only through this, so
 * every change bumps the version that keeps claimable(), asked before every claim, from being recomputed.
 */
export function heldShards(monotonic: () => number, life: ProofOfLife) {
  const held = new Map<number, Held>();
  const releasing = new Set<number>();
  // Every change to what is held or given back bumps the version, so claimable() is recomputed.
  let version = 0;
  let cached: { version: number; until: number; shards: number[] | null } | null = null;
  /** Counts broken proofs: leases won across one are not kept (others may have read this process dead). */
  let losses = 0;
  const mine = () => [...held].map(([shard, h]) => ({ shard, generation: h.generation }));

  return {
    get size(): number {
      return held.size;
    },
    get losses(): number {
      return losses;
    },
    has: (shard: number): boolean => held.has(shard),
    get: (shard: number): Readonly<Held> | undefined => held.get(shard),
    /** Every held shard (a copy: the caller may drop shards while going through it). */
    entries: (): [number, Readonly<Held>][] => [...held],
    /** Every held shard and its generation, as the store renews and releases them. */
    mine,
    /** What may be claimable changed without a lease changing (a wait or a proof ran out). */
    changed() {
      version++;
    },
    take(shard: number, h: Held) {
      held.set(shard, h);
      version++;
    },
    /** A renewal held: the claim window runs until `validUntil`. */
    extend(shard: number, validUntil: number) {
      const h = held.get(shard);
      if (h) h.validUntil = validUntil;
      version++;
    },
    /** The lease was lost (a newer generation, or it expired before its renewal): nothing more is claimed. */
    drop(shard: number) {
      held.delete(shard);
      releasing.delete(shard);
      version++;
    },
    /** The proof of life broke: every lease counts lost, and those won across the break are not kept. */
    loseAll() {
      held.clear();
      releasing.clear();
      losses++;
      version++;
    },
    /** Stops claiming from the shard to give it back; its generation, or null when not held or going already. */
    giveBack(shard: number): number | null {
      const h = held.get(shard);
      if (!h || releasing.has(shard)) return null;
      releasing.add(shard);
      version++;
      return h.generation;
    },
    /** The shard was given back (or its release failed and it expires): held no more under that generation. */
    givenBack(shard: number, generation: number) {
      if (held.get(shard)?.generation === generation) held.delete(shard);
      releasing.delete(shard);
      version++;
    },
    /** Everything held is given back at once (a stop): what was held, for the store to release. */
    releaseAll() {
      const all = mine();
      held.clear();
      version++;
      return all;
    },
    /**
     * The shards this process may claim from now: held, valid by its own clock, not being given back;
     * null for all of them. Asked before every claim, so the answer is kept until something changes.
     */
    claimable(): number[] | null {
      const t = monotonic();
      if (cached && cached.version === version && cached.until > t) return cached.shards;
      const out: number[] = [];
      let until = Number.POSITIVE_INFINITY;
      if (life.valid())
        for (const [shard, h] of held) {
          if (h.validUntil > t && !releasing.has(shard) && h.notBefore <= t) {
            out.push(shard);
            until = Math.min(until, h.validUntil);
          } else if (h.notBefore > t) until = Math.min(until, h.notBefore);
        }
      until = Math.min(until, life.validUntil);
      const shards = out.length === SHARD_COUNT ? null : out;
      cached = { version, until, shards };
      return shards;
    },
    /** True while this process may start work of the shard (held, valid, not being given back). */
    mayClaim(shard: number): boolean {
      const h = held.get(shard);
      const t = monotonic();
      return h !== undefined && h.validUntil > t && h.notBefore <= t && !releasing.has(shard) && life.valid();
    },
    /** The lease generation this process holds the shard under, and since when; null when not held. */
    tenure(shard: number): { generation: number; since: number } | null {
      const h = held.get(shard);
      return h ? { generation: h.generation, since: h.since } : null;
    },
  };
}

export type HeldShards = ReturnType<typeof heldShards>;
