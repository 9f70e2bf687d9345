import type { Logger } from "../logger.ts";
import type { DeliveryMetrics } from "../ports/sending.ts";
import type { ShardRepository } from "../ports/shards.ts";
import type { Clock } from "../ports/system.ts";
import { heldShards } from "./held-shards.ts";
import { leaseRenewal } from "./lease-renewal.ts";
import { livenessTiming, processLiveness } from "./liveness.ts";
import { ownershipRound } from "./ownership-round.ts";
import type { OwnershipOptions } from "./ownership-timing.ts";

export interface OwnershipDeps {
  shards: ShardRepository;
  clock: Clock;
  logger: Logger;
  metrics: DeliveryMetrics;
  processId: string;
  /** Resolves once nothing of the shard is held any more (sent and recorded). */
  drain(shard: number): Promise<void>;
  /** Shards were gained: there may be due work to claim. */
  gained(): void;
  /** Local elapsed time in ms, for lease validity (immune to wall-clock jumps). */
  monotonic?: () => number;
}

/**
 * Stage 1, own shards: announces this process, renews its shard leases, takes over shards whose
 * owner's lease expired, and gives back those another process should own, so every live process
 * owns ceil or floor(256 / processes) shards. A lease generation is won by a unique insert (atomic on
 * every backend). A lease lasts HERALD_DELIVERY_TIMEOUT + HERALD_LEASE_MARGIN; the owner starts sends
 * in a shard only within the margin (less a safety allowance) after its last renewal began, so what it
 * sends ends before the lease can expire, and it drops a shard as soon as it reads a newer generation
 * (fencing). ADR 9.
 *
 * What is held belongs to `held-shards.ts`; the renewal (`lease-renewal.ts`) and the round that takes
 * and gives back shards (`ownership-round.ts`) change it through that. This file starts and stops them.
 */
export function shardOwnership(deps: OwnershipDeps, options: OwnershipOptions) {
  const { shards, logger, processId } = deps;
  const monotonic = deps.monotonic ?? (() => performance.now());
  let timer: ReturnType<typeof setInterval> | null = null;
  let renewTimer: ReturnType<typeof setInterval> | null = null;
  let stopped = false;
  let stopProofs: (() => void) | null = null;
  let firstTick: Promise<void> = Promise.resolve();
  const timing = options.liveness ?? livenessTiming(shards.liveness);
  const life = processLiveness(
    {
      ...deps,
      lost() {
        // Others may have read this process dead and be taking its shards: none is sent under these leases.
        if (leases.size > 0) logger.warn("counting every shard lost", { shards: leases.size });
        leases.loseAll();
      },
      // Shards still held may be claimed from again: what was let go while the proof ran out is read.
      regained() {
        leases.changed();
        if (!stopped && leases.size > 0) deps.gained();
      },
    },
    timing,
  );
  const leases = heldShards(monotonic, life);
  const isStopped = () => stopped;
  const rounds = { ...deps, monotonic, leases, stopped: isStopped };
  const renewal = leaseRenewal(rounds, options);
  const round = ownershipRound(
    { ...rounds, proven: (began) => life.proven(began), deadWaitMs: timing.takeoverWaitMs },
    options,
  );

  return {
    start() {
      stopped = false;
      // The proof of life and the heartbeat go first, so the first round already counts this process live.
      firstTick = life.start().then(renewal.run).then(round.run);
      // Proofs that other statements carried (a publish) stand in for checks, as the round's do.
      stopProofs = shards.proofs?.listen((id, began) => id === processId && life.proven(began)) ?? null;
      timer = setInterval(() => void round.run(), options.tickMs);
      renewTimer = setInterval(() => void renewal.run(), options.renewEveryMs);
      (timer as { unref?: () => void }).unref?.();
      (renewTimer as { unref?: () => void }).unref?.();
    },
    /** Resolves once the first round (taking shards) has finished. */
    ready(): Promise<void> {
      return firstTick;
    },
    claimable: leases.claimable,
    mayClaim: leases.mayClaim,
    tenure: leases.tenure,
    get owned(): number {
      return leases.size;
    },
    /**
     * Stops the rounds and gives every shard back at once, then leaves (its heartbeat and proof of life).
     * `atOnce`: without waiting for a round on its way (a stop "at once"; what it takes expires, or is
     * taken at once as a dead process's).
     */
    async stop(atOnce = false): Promise<void> {
      stopped = true;
      if (timer) clearInterval(timer);
      if (renewTimer) clearInterval(renewTimer);
      round.stop();
      stopProofs?.();
      stopProofs = null;
      timer = null;
      renewTimer = null;
      life.stop();
      if (!atOnce) {
        await firstTick;
        await round.settled();
        await renewal.settled();
      }
      const mine = leases.releaseAll();
      deps.metrics.shardsOwned(0);
      try {
        if (mine.length > 0) await shards.release(processId, mine);
        await shards.leave(processId);
      } catch (e) {
        logger.warn("giving shards back failed; they expire on their own", { error: e as Error });
      }
    },
  };
}

export { type OwnershipOptions, ownershipTiming } from "./ownership-timing.ts";
export type ShardOwnership = ReturnType<typeof shardOwnership>;
