import { SHARD_COUNT } from "../../domain/shards.ts";
import type { Logger } from "../logger.ts";
import type { DeliveryMetrics } from "../ports/sending.ts";
import type { ShardLease } from "../ports/shards.ts";

/** One shard to try to take, and how long after the round's read its sends must wait. */
export interface TakeoverTry {
  lease: ShardLease;
  waitMs: number;
  /** What the head said: never leased or given back; this process's own (lost) lease; expired; a dead owner's. */
  from: "free" | "own" | "expired" | "dead";
}

/**
 * Which shards this process tries to take in a round (ADR 9, ADR 25): those the assignment gives it that
 * it does not hold, when their head is free (never leased, given back), its own (a lease it counted lost:
 * it is the only sender of that generation and it stopped), expired, or held by a process the store
 * reads as dead. A dead owner may still have started sends until its proof's validity ran out, so those
 * shards' sends wait `deadWaitMs` after the read; an expired lease already covers its owner's window.
 */
export function planTakeovers(input: {
  me: string;
  wanted: ReadonlyMap<number, string>;
  held: { has(shard: number): boolean };
  heads: ReadonlyMap<number, ShardLease>;
  alive: ReadonlySet<string>;
  now: Date;
  expiresAt: Date;
  deadWaitMs: number;
}): TakeoverTry[] {
  const tries: TakeoverTry[] = [];
  const t = input.now.getTime();
  for (let shard = 0; shard < SHARD_COUNT; shard++) {
    if (input.wanted.get(shard) !== input.me || input.held.has(shard)) continue;
    const head = input.heads.get(shard);
    const lease = {
      shard,
      generation: (head?.generation ?? 0) + 1,
      owner: input.me,
      expiresAt: input.expiresAt,
    };
    if (!head || head.expiresAt.getTime() <= 0) tries.push({ lease, waitMs: 0, from: "free" });
    else if (head.expiresAt.getTime() <= t) tries.push({ lease, waitMs: 0, from: "expired" });
    else if (head.owner === input.me) tries.push({ lease, waitMs: 0, from: "own" });
    else if (!input.alive.has(head.owner)) tries.push({ lease, waitMs: input.deadWaitMs, from: "dead" });
  }
  return tries;
}

/** Counts and logs the shards a round took from others: expired leases, and dead owners'. */
export function reportTakeovers(
  tries: readonly TakeoverTry[],
  won: ReadonlySet<number>,
  waitMs: number,
  metrics: Pick<DeliveryMetrics, "leaseRecovered">,
  logger: Logger,
): void {
  const taken = (from: TakeoverTry["from"]) =>
    tries.filter((t) => t.from === from && won.has(t.lease.shard)).length;
  const [expired, dead] = [taken("expired"), taken("dead")];
  if (expired + dead > 0) metrics.leaseRecovered(expired + dead);
  if (expired > 0)
    logger.warn("took over shards whose owner's lease expired (a process died or stalled)", {
      shards: expired,
    });
  if (dead > 0) logger.warn("took over the shards of a process that died", { shards: dead, wait_ms: waitMs });
}
