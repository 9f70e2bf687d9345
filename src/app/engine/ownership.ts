import { assignShards, SHARD_COUNT } from "../../domain/shards.ts";
import type { Logger } from "../logger.ts";
import type { DeliveryMetrics } from "../ports/sending.ts";
import type { ShardLease, ShardRepository } from "../ports/shards.ts";
import type { Clock } from "../ports/system.ts";
import { livenessTiming, processLiveness } from "./liveness.ts";
import type { OwnershipOptions } from "./ownership-timing.ts";
import { planTakeovers, reportTakeovers } from "./takeover.ts";

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

interface Held {
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

/**
 * Stage 1, own shards: announces this process, renews its shard leases, takes over shards whose
 * owner's lease expired, and gives back those another process should own, so every live process
 * owns ceil or floor(256 / processes) shards. A lease generation is won by a unique insert (atomic on
 * every backend). A lease lasts HERALD_DELIVERY_TIMEOUT + HERALD_LEASE_MARGIN; the owner starts sends
 * in a shard only within the margin (less a safety allowance) after its last renewal began, so what it
 * sends ends before the lease can expire, and it drops a shard as soon as it reads a newer generation
 * (fencing). ADR 9.
 */
export function shardOwnership(deps: OwnershipDeps, options: OwnershipOptions) {
  const { shards, clock, logger, processId } = deps;
  const monotonic = deps.monotonic ?? (() => performance.now());
  const held = new Map<number, Held>();
  const releasing = new Set<number>();
  // Every change to what is held or given back bumps the version, so claimable() is recomputed.
  let version = 0;
  let cached: { version: number; until: number; shards: number[] | null } | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  let renewTimer: ReturnType<typeof setInterval> | null = null;
  let renewing: Promise<void> | null = null;
  let ticking: Promise<void> | null = null;
  let stopped = false;
  let firstTick: Promise<void> = Promise.resolve();
  let gainTimer: ReturnType<typeof setTimeout> | null = null;
  /** Counts broken proofs: leases won across one are not kept (others may have read this process dead). */
  let losses = 0;
  const timing = options.liveness ?? livenessTiming(shards.liveness);
  const life = processLiveness(
    {
      ...deps,
      lost() {
        // Others may have read this process dead and be taking its shards: none is sent under these leases.
        if (held.size > 0) logger.warn("counting every shard lost", { shards: held.size });
        held.clear();
        releasing.clear();
        losses++;
        version++;
      },
      // Shards still held may be claimed from again: what was let go while the proof ran out is read.
      regained() {
        version++;
        if (!stopped && held.size > 0) deps.gained();
      },
    },
    timing,
  );

  async function renew(): Promise<void> {
    const started = monotonic();
    const now = clock.now();
    const expiresAt = new Date(now.getTime() + options.leaseMs);
    const mine = [...held].map(([shard, h]) => ({ shard, generation: h.generation }));
    const [, renewed] = await Promise.all([
      // On "heartbeat" stores the heartbeat is short and beaten by the proof of life instead.
      shards.liveness === "heartbeat" ? undefined : shards.beat(processId, expiresAt),
      mine.length > 0 ? shards.renew(processId, mine, expiresAt, now) : Promise.resolve([]),
    ]);
    const kept = new Set(renewed);
    let regained = false;
    for (const m of mine) {
      const h = held.get(m.shard);
      if (h?.generation !== m.generation) continue;
      if (kept.has(m.shard)) {
        // The claim window had run out and is open again: the shard's work, let go meanwhile, is read again.
        const t = monotonic();
        const lapsed = h.validUntil <= t;
        h.validUntil = started + options.claimWindowMs;
        regained ||= lapsed && h.validUntil > t;
      } else {
        // Expired before this renewal (a pause outlived it): another process may be taking it over, so
        // nothing more is claimed from it under this generation. The next round takes it again if nobody did.
        held.delete(m.shard);
        releasing.delete(m.shard);
        logger.warn("lost a shard lease (a pause or a partition outlived it)", { shard: m.shard });
      }
      version++;
    }
    if (regained && !stopped) deps.gained();
  }

  /** Renewal runs on its own timer, so a slow round (a big acquire) never delays it. */
  function runRenew(): Promise<void> {
    if (stopped) return Promise.resolve();
    if (renewing) return renewing;
    renewing = renew()
      .catch((e) => logger.warn("renewing shard leases failed; trying again", { error: e as Error }))
      .finally(() => {
        renewing = null;
      });
    return renewing;
  }

  function giveBack(shard: number) {
    const h = held.get(shard);
    if (!h || releasing.has(shard)) return;
    releasing.add(shard);
    version++;
    void (async () => {
      await Promise.race([deps.drain(shard), new Promise((r) => setTimeout(r, options.drainMs))]);
      try {
        await shards.release(processId, [{ shard, generation: h.generation }]);
      } catch (e) {
        // It expires on its own instead; until then nobody claims from it.
        logger.warn("giving a shard back failed; it will expire", { error: e as Error, shard });
      }
      if (held.get(shard)?.generation === h.generation) held.delete(shard);
      releasing.delete(shard);
      version++;
    })();
  }

  async function tick(): Promise<void> {
    const now = clock.now();
    const sole = shards.liveness === "sole";
    // The embedded database's pid lock proves this process the only one: every other owner has died.
    const began = monotonic();
    const both = sole || !shards.round ? null : await shards.round(now, processId);
    if (both?.proven) life.proven(began); // the read saw this process's proof of life held
    const [heads, live] = both
      ? [both.heads, both.live]
      : await Promise.all([shards.heads(), sole ? [] : shards.live(now)]);
    // After the read: a shard given back was given back before this moment, its sends all started.
    const seen = clock.now().getTime();
    const read = monotonic();
    const headOf = new Map<number, ShardLease>(heads.map((h) => [h.shard, h]));
    // Fencing: a newer generation (or another owner) means this lease was lost; stop claiming at once.
    for (const [shard, h] of held) {
      const head = headOf.get(shard);
      if (!head || head.generation !== h.generation || head.owner !== processId) {
        held.delete(shard);
        releasing.delete(shard);
        version++;
        logger.warn("lost a shard lease (a pause or a partition outlived it)", { shard });
      }
    }
    if (stopped) return;
    const wanted = assignShards([...live, processId]);
    for (const shard of held.keys()) if (wanted.get(shard) !== processId) giveBack(shard);
    const tries = planTakeovers({
      me: processId,
      wanted,
      held,
      heads: headOf,
      alive: new Set([...live, processId]),
      now,
      expiresAt: new Date(now.getTime() + options.leaseMs),
      deadWaitMs: timing.takeoverWaitMs,
    });
    if (tries.length === 0) return;
    const [started, lossesBefore] = [monotonic(), losses];
    const won = new Set(await shards.acquire(tries.map((t) => t.lease)));
    // Taken again next round, as its own, under a newer generation.
    if (losses !== lossesBefore) won.clear();
    let wait = 0;
    for (const t of tries) {
      if (!won.has(t.lease.shard)) continue;
      held.set(t.lease.shard, {
        generation: t.lease.generation,
        validUntil: started + options.claimWindowMs,
        since: seen + t.waitMs,
        notBefore: read + t.waitMs,
      });
      wait = Math.max(wait, t.waitMs);
      version++;
    }
    reportTakeovers(tries, won, wait, deps.metrics, logger);
    if (won.size === 0) return;
    deps.gained();
    // Shards whose sends wait: claimed again once they may start.
    if (wait > 0) {
      if (gainTimer) clearTimeout(gainTimer);
      gainTimer = setTimeout(() => {
        gainTimer = null;
        version++;
        if (!stopped) deps.gained();
      }, wait);
    }
  }

  function runTick(): Promise<void> {
    // After stop nothing more is read or written: the store may be closing.
    if (stopped) return Promise.resolve();
    if (ticking) return ticking;
    ticking = tick()
      .catch((e) => {
        // A round cut off by a stop (the store closing under it) is not news; any other failure is.
        if (!stopped) logger.warn("shard ownership round failed; it runs again", { error: e as Error });
      })
      .finally(() => {
        ticking = null;
        deps.metrics.shardsOwned(held.size);
      });
    return ticking;
  }

  return {
    start() {
      stopped = false;
      // The proof of life and the heartbeat go first, so the first round already counts this process live.
      firstTick = life.start().then(runRenew).then(runTick);
      timer = setInterval(() => void runTick(), options.tickMs);
      renewTimer = setInterval(() => void runRenew(), options.renewEveryMs);
      (timer as { unref?: () => void }).unref?.();
      (renewTimer as { unref?: () => void }).unref?.();
    },
    /** Resolves once the first round (taking shards) has finished. */
    ready(): Promise<void> {
      return firstTick;
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
    get owned(): number {
      return held.size;
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
      if (gainTimer) clearTimeout(gainTimer);
      timer = null;
      renewTimer = null;
      gainTimer = null;
      life.stop();
      if (!atOnce) {
        await firstTick;
        await ticking;
        await renewing;
      }
      const mine = [...held].map(([shard, h]) => ({ shard, generation: h.generation }));
      held.clear();
      version++;
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
