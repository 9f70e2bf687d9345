import { assignShards } from "../../domain/shards.ts";
import type { Logger } from "../logger.ts";
import type { DeliveryMetrics } from "../ports/sending.ts";
import type { ShardLease, ShardRepository } from "../ports/shards.ts";
import type { Clock } from "../ports/system.ts";
import type { HeldShards } from "./held-shards.ts";
import type { OwnershipOptions } from "./ownership-timing.ts";
import { planTakeovers, reportTakeovers } from "./takeover.ts";

export interface OwnershipRoundDeps {
  shards: ShardRepository;
  clock: Clock;
  logger: Logger;
  metrics: DeliveryMetrics;
  processId: string;
  monotonic: () => number;
  leases: HeldShards;
  /** The round's read saw this process's proof of life held, from `began` (monotonic) on. */
  proven(began: number): void;
  /** How long after reading an owner dead its shards' sends wait (liveness.ts). */
  deadWaitMs: number;
  stopped(): boolean;
  /** Resolves once nothing of the shard is held any more (sent and recorded). */
  drain(shard: number): Promise<void>;
  /** Shards were gained: there may be due work to claim. */
  gained(): void;
}

/**
 * The ownership round (ADR 9, ADR 25): reads the shard heads and the live processes, drops the shards
 * whose lease it lost (fencing), gives back those assigned to another process, and takes the free,
 * expired or dead owners' shards assigned to it.
 */
export function ownershipRound(
  deps: OwnershipRoundDeps,
  options: Pick<OwnershipOptions, "leaseMs" | "claimWindowMs" | "drainMs">,
) {
  const { shards, clock, logger, processId, monotonic, leases } = deps;
  let ticking: Promise<void> | null = null;
  let gainTimer: ReturnType<typeof setTimeout> | null = null;
  /** The last assignment and the live processes it was made for: recomputed only when they change. */
  let assigned: { members: string; wanted: Map<number, string> } | null = null;

  function giveBack(shard: number) {
    const generation = leases.giveBack(shard);
    if (generation === null) return;
    void (async () => {
      await Promise.race([deps.drain(shard), new Promise((r) => setTimeout(r, options.drainMs))]);
      try {
        await shards.release(processId, [{ shard, generation }]);
      } catch (e) {
        // It expires on its own instead; until then nobody claims from it.
        logger.warn("giving a shard back failed; it will expire", { error: e as Error, shard });
      }
      leases.givenBack(shard, generation);
    })();
  }

  async function tick(): Promise<void> {
    const now = clock.now();
    const sole = shards.liveness === "sole";
    // The embedded database's pid lock proves this process the only one: every other owner has died.
    const began = monotonic();
    const both = sole || !shards.round ? null : await shards.round(now, processId);
    if (both?.proven) deps.proven(began); // the read saw this process's proof of life held
    const [heads, live] = both
      ? [both.heads, both.live]
      : await Promise.all([shards.heads(), sole ? [] : shards.live(now)]);
    // After the read: a shard given back was given back before this moment, its sends all started.
    const seen = clock.now().getTime();
    const read = monotonic();
    const headOf = new Map<number, ShardLease>(heads.map((h) => [h.shard, h]));
    // Fencing: a newer generation (or another owner) means this lease was lost; stop claiming at once.
    for (const [shard, h] of leases.entries()) {
      const head = headOf.get(shard);
      if (!head || head.generation !== h.generation || head.owner !== processId) {
        leases.drop(shard);
        logger.warn("lost a shard lease (a pause or a partition outlived it)", { shard });
      }
    }
    if (deps.stopped()) return;
    const members = [...new Set([...live, processId])].sort();
    const key = members.join(" ");
    if (assigned?.members !== key) assigned = { members: key, wanted: assignShards(members) };
    const wanted = assigned.wanted;
    for (const [shard] of leases.entries()) if (wanted.get(shard) !== processId) giveBack(shard);
    const tries = planTakeovers({
      me: processId,
      wanted,
      held: leases,
      heads: headOf,
      alive: new Set([...live, processId]),
      now,
      expiresAt: new Date(now.getTime() + options.leaseMs),
      deadWaitMs: deps.deadWaitMs,
    });
    if (tries.length === 0) return;
    const [started, lossesBefore] = [monotonic(), leases.losses];
    const won = new Set(await shards.acquire(tries.map((t) => t.lease)));
    // Taken again next round, as its own, under a newer generation.
    if (leases.losses !== lossesBefore) won.clear();
    let wait = 0;
    for (const t of tries) {
      if (!won.has(t.lease.shard)) continue;
      leases.take(t.lease.shard, {
        generation: t.lease.generation,
        validUntil: started + options.claimWindowMs,
        since: seen + t.waitMs,
        notBefore: read + t.waitMs,
      });
      wait = Math.max(wait, t.waitMs);
    }
    reportTakeovers(tries, won, wait, deps.metrics, logger);
    if (won.size === 0) return;
    deps.gained();
    // Shards whose sends wait: claimed again once they may start.
    if (wait > 0) {
      if (gainTimer) clearTimeout(gainTimer);
      gainTimer = setTimeout(() => {
        gainTimer = null;
        leases.changed();
        if (!deps.stopped()) deps.gained();
      }, wait);
    }
  }

  return {
    /** Runs a round now, or joins the round on its way. */
    run(): Promise<void> {
      // After stop nothing more is read or written: the store may be closing.
      if (deps.stopped()) return Promise.resolve();
      if (ticking) return ticking;
      ticking = tick()
        .catch((e) => {
          // A round cut off by a stop (the store closing under it) is not news; any other failure is.
          if (!deps.stopped())
            logger.warn("shard ownership round failed; it runs again", { error: e as Error });
        })
        .finally(() => {
          ticking = null;
          deps.metrics.shardsOwned(leases.size);
        });
      return ticking;
    },
    /** Resolves once the round on its way (if any) has ended. */
    async settled(): Promise<void> {
      await ticking;
    },
    /** No more timed wake-up for shards whose sends waited. */
    stop() {
      if (gainTimer) clearTimeout(gainTimer);
      gainTimer = null;
    },
  };
}
