import { assignShards, SHARD_COUNT } from "../../domain/shards.ts";
import type { Logger } from "../logger.ts";
import type { DeliveryMetrics } from "../ports/sending.ts";
import type { ShardLease, ShardRepository } from "../ports/shards.ts";
import type { Clock } from "../ports/system.ts";

export interface OwnershipOptions {
  /** How long a lease and a heartbeat last without renewal (HERALD_DELIVERY_TIMEOUT + HERALD_LEASE_MARGIN). */
  leaseMs: number;
  /**
   * How long after a renewal began this process may still start sends in the shard (the margin less a
   * safety allowance): a send started then ends, timeout included, before the lease can expire.
   */
  claimWindowMs: number;
  /** How often leases and the heartbeat are renewed. */
  renewEveryMs: number;
  /** How often shard heads and live processes are read (takeovers, rebalancing). */
  tickMs: number;
  /** How long a shard being given back may wait for its in-flight work before it is given back anyway. */
  drainMs: number;
}

/** The timing of leases from the engine's options (HERALD_DELIVERY_TIMEOUT, HERALD_LEASE_MARGIN). */
export function ownershipTiming(o: {
  deliveryTimeoutMs: number;
  leaseMarginMs?: number;
  ownershipTickMs?: number;
}): OwnershipOptions {
  const marginMs = o.leaseMarginMs ?? 60_000;
  // Pauses and clock skew up to this much cannot make two owners start sends in one shard (ADR 9).
  const safetyMs = Math.min(1_000, marginMs / 4);
  return {
    leaseMs: o.deliveryTimeoutMs + marginMs,
    claimWindowMs: marginMs - safetyMs,
    renewEveryMs: marginMs / 4,
    tickMs: o.ownershipTickMs ?? Math.min(1_000, marginMs / 4),
    drainMs: o.deliveryTimeoutMs + 5_000,
  };
}

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
}

const EPOCH = new Date(0);

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

  async function renew(): Promise<void> {
    const started = monotonic();
    const now = clock.now();
    const expiresAt = new Date(now.getTime() + options.leaseMs);
    const mine = [...held].map(([shard, h]) => ({ shard, generation: h.generation }));
    const [, renewed] = await Promise.all([
      shards.beat(processId, expiresAt),
      mine.length > 0 ? shards.renew(processId, mine, expiresAt, now) : Promise.resolve([]),
    ]);
    const kept = new Set(renewed);
    for (const m of mine) {
      const h = held.get(m.shard);
      if (h?.generation !== m.generation) continue;
      if (kept.has(m.shard)) h.validUntil = started + options.claimWindowMs;
      else {
        // Expired before this renewal (a pause outlived it): another process may be taking it over, so
        // nothing more is claimed from it under this generation. The next round takes it again if nobody did.
        held.delete(m.shard);
        releasing.delete(m.shard);
        logger.warn("lost a shard lease (a pause or a partition outlived it)", { shard: m.shard });
      }
      version++;
    }
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
      version++;
      releasing.delete(shard);
      version++;
    })();
  }

  async function tick(): Promise<void> {
    const now = clock.now();
    const [heads, live] = await Promise.all([shards.heads(), shards.live(now)]);
    // After the read: a shard given back was given back before this moment, its sends all started.
    const seen = clock.now().getTime();
    const headOf = new Map<number, ShardLease>(heads.map((h) => [h.shard, h]));
    // Fencing: a newer generation (or another owner) means this lease was lost; stop claiming at once.
    for (const [shard, h] of held) {
      const head = headOf.get(shard);
      if (!head || head.generation !== h.generation || head.owner !== processId) {
        held.delete(shard);
        version++;
        releasing.delete(shard);
        version++;
        logger.warn("lost a shard lease (a pause or a partition outlived it)", { shard });
      }
    }
    if (stopped) return;
    const wanted = assignShards([...live, processId]);
    for (const shard of held.keys()) if (wanted.get(shard) !== processId) giveBack(shard);
    const tries: ShardLease[] = [];
    let takeovers = 0;
    const expiresAt = new Date(now.getTime() + options.leaseMs);
    for (let shard = 0; shard < SHARD_COUNT; shard++) {
      if (wanted.get(shard) !== processId || held.has(shard)) continue;
      const head = headOf.get(shard);
      if (head && head.expiresAt.getTime() > now.getTime()) continue;
      if (head && head.expiresAt.getTime() > EPOCH.getTime()) takeovers++;
      tries.push({ shard, generation: (head?.generation ?? 0) + 1, owner: processId, expiresAt });
    }
    if (tries.length === 0) return;
    const started = monotonic();
    const won = new Set(await shards.acquire(tries));
    for (const t of tries) {
      if (won.has(t.shard))
        held.set(t.shard, {
          generation: t.generation,
          validUntil: started + options.claimWindowMs,
          since: seen,
        });
      version++;
    }
    if (takeovers > 0) {
      const taken = tries.filter(
        (t) => won.has(t.shard) && (headOf.get(t.shard)?.expiresAt.getTime() ?? 0) > 0,
      );
      if (taken.length > 0) {
        deps.metrics.leaseRecovered(taken.length);
        logger.warn("took over shards whose owner's lease expired (a process died or stalled)", {
          shards: taken.length,
        });
      }
    }
    if (won.size > 0) deps.gained();
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
      // The heartbeat goes first, so the first round already counts this process among the live ones.
      firstTick = runRenew().then(runTick);
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
      for (const [shard, h] of held) {
        if (h.validUntil > t && !releasing.has(shard)) {
          out.push(shard);
          until = Math.min(until, h.validUntil);
        }
      }
      const shards = out.length === SHARD_COUNT ? null : out;
      cached = { version, until, shards };
      return shards;
    },
    /** True while this process may start work of the shard (held, valid, not being given back). */
    mayClaim(shard: number): boolean {
      const h = held.get(shard);
      return h !== undefined && h.validUntil > monotonic() && !releasing.has(shard);
    },
    /** The lease generation this process holds the shard under, and since when; null when not held. */
    tenure(shard: number): { generation: number; since: number } | null {
      const h = held.get(shard);
      return h ? { generation: h.generation, since: h.since } : null;
    },
    get owned(): number {
      return held.size;
    },
    /** Stops the rounds and gives every shard back at once, then leaves (graceful stop). */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearInterval(timer);
      if (renewTimer) clearInterval(renewTimer);
      timer = null;
      renewTimer = null;
      await firstTick;
      await ticking;
      await renewing;
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

export type ShardOwnership = ReturnType<typeof shardOwnership>;
