import type { Logger } from "../logger.ts";
import type { ShardRepository } from "../ports/shards.ts";
import type { Clock } from "../ports/system.ts";
import type { HeldShards } from "./held-shards.ts";
import type { OwnershipOptions } from "./ownership-timing.ts";

export interface LeaseRenewalDeps {
  shards: ShardRepository;
  clock: Clock;
  logger: Logger;
  processId: string;
  monotonic: () => number;
  leases: HeldShards;
  stopped(): boolean;
  /** A claim window that had run out is open again: there may be due work to claim. */
  gained(): void;
}

/**
 * Renews this process's shard leases and its heartbeat, in two writes for all its shards (ADR 9).
 * Renewal runs on its own timer, so a slow round (a big acquire) never delays it.
 */
export function leaseRenewal(
  deps: LeaseRenewalDeps,
  options: Pick<OwnershipOptions, "leaseMs" | "claimWindowMs">,
) {
  const { shards, clock, logger, processId, monotonic, leases } = deps;
  let renewing: Promise<void> | null = null;

  async function renew(): Promise<void> {
    const started = monotonic();
    const now = clock.now();
    const expiresAt = new Date(now.getTime() + options.leaseMs);
    const mine = leases.mine();
    const [, renewed] = await Promise.all([
      // On "heartbeat" stores the heartbeat is short and beaten by the proof of life instead.
      shards.liveness === "heartbeat" ? undefined : shards.beat(processId, expiresAt),
      mine.length > 0 ? shards.renew(processId, mine, expiresAt, now) : Promise.resolve([]),
    ]);
    const kept = new Set(renewed);
    let regained = false;
    for (const m of mine) {
      const h = leases.get(m.shard);
      if (h?.generation !== m.generation) continue;
      if (kept.has(m.shard)) {
        // The claim window had run out and is open again: the shard's work, let go meanwhile, is read again.
        const t = monotonic();
        const lapsed = h.validUntil <= t;
        const validUntil = started + options.claimWindowMs;
        leases.extend(m.shard, validUntil);
        regained ||= lapsed && validUntil > t;
      } else {
        // Expired before this renewal (a pause outlived it): another process may be taking it over, so
        // nothing more is claimed from it under this generation. The next round takes it again if nobody did.
        leases.drop(m.shard);
        logger.warn("lost a shard lease (a pause or a partition outlived it)", { shard: m.shard });
      }
    }
    if (regained && !deps.stopped()) deps.gained();
  }

  return {
    /** Renews now, or joins the renewal on its way. */
    run(): Promise<void> {
      if (deps.stopped()) return Promise.resolve();
      if (renewing) return renewing;
      renewing = renew()
        .catch((e) => logger.warn("renewing shard leases failed; trying again", { error: e as Error }))
        .finally(() => {
          renewing = null;
        });
      return renewing;
    },
    /** Resolves once the renewal on its way (if any) has ended. */
    async settled(): Promise<void> {
      await renewing;
    },
  };
}
