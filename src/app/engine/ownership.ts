import { assignShards, SHARD_COUNT } from "../../domain/shards.ts";
import type { Logger } from "../logger.ts";
import type { DeliveryMetrics } from "../ports/sending.ts";
import type { ShardLease, ShardRepository } from "../ports/shards.ts";
import type { Clock } from "../ports/system.ts";

export interface OwnershipOptions {
  /** How long a lease and a heartbeat last without renewal (HERALD_LEASE_MARGIN). */
  leaseMs: number;
  /** How often shard heads and live processes are read (takeovers, rebalancing). */
  tickMs: number;
  /** How long a shard being given back may wait for its in-flight work before it is given back anyway. */
  drainMs: number;
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
}

const EPOCH = new Date(0);

/**
 * Stage 1, own shards: announces this process, renews its shard leases, takes over shards whose
 * owner's lease expired, and gives back those another process should own, so every live process
 * owns ceil or floor(256 / processes) shards. A lease generation is won by a unique insert (atomic on
 * every backend); the owner stops claiming from a shard a safety margin before its lease could expire
 * by its own clock, and drops it as soon as it sees a newer generation (fencing). ADR 9.
 */
export function shardOwnership(deps: OwnershipDeps, options: OwnershipOptions) {
  const { shards, clock, logger, processId } = deps;
  const monotonic = deps.monotonic ?? (() => performance.now());
  const held = new Map<number, Held>();
  const releasing = new Set<number>();
  // Clock skew and pauses up to this much cannot make two owners claim at once (ADR 9).
  const safetyMs = Math.max(Math.min(1_000, options.leaseMs / 2), options.leaseMs / 5);
  const renewEveryMs = Math.max(options.leaseMs / 4, 50);
  let lastRenew = Number.NEGATIVE_INFINITY;
  let timer: ReturnType<typeof setInterval> | null = null;
  let ticking: Promise<void> | null = null;
  let stopped = false;
  let firstTick: Promise<void> = Promise.resolve();

  async function renew(): Promise<void> {
    const started = monotonic();
    const expiresAt = new Date(clock.now().getTime() + options.leaseMs);
    const mine = [...held].map(([shard, h]) => ({ shard, generation: h.generation }));
    await Promise.all([
      shards.beat(processId, expiresAt),
      mine.length > 0 ? shards.renew(processId, mine, expiresAt) : Promise.resolve(),
    ]);
    lastRenew = started;
    for (const m of mine) {
      const h = held.get(m.shard);
      if (h?.generation === m.generation) h.validUntil = started + options.leaseMs - safetyMs;
    }
  }

  function giveBack(shard: number) {
    const h = held.get(shard);
    if (!h || releasing.has(shard)) return;
    releasing.add(shard);
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
    })();
  }

  async function tick(): Promise<void> {
    if (monotonic() - lastRenew >= renewEveryMs) await renew();
    const now = clock.now();
    const [heads, live] = await Promise.all([shards.heads(), shards.live(now)]);
    const headOf = new Map<number, ShardLease>(heads.map((h) => [h.shard, h]));
    // Fencing: a newer generation (or another owner) means this lease was lost; stop claiming at once.
    for (const [shard, h] of held) {
      const head = headOf.get(shard);
      if (!head || head.generation !== h.generation || head.owner !== processId) {
        held.delete(shard);
        releasing.delete(shard);
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
        held.set(t.shard, { generation: t.generation, validUntil: started + options.leaseMs - safetyMs });
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
    if (ticking) return ticking;
    ticking = tick()
      .catch((e) => logger.warn("shard ownership round failed; it runs again", { error: e as Error }))
      .finally(() => {
        ticking = null;
      });
    return ticking;
  }

  return {
    start() {
      stopped = false;
      firstTick = runTick();
      timer = setInterval(() => void runTick(), options.tickMs);
      (timer as { unref?: () => void }).unref?.();
    },
    /** Resolves once the first round (taking shards) has finished. */
    ready(): Promise<void> {
      return firstTick;
    },
    /** The shards this process may claim from now: held, valid by its own clock, not being given back. */
    claimable(): number[] | null {
      const t = monotonic();
      const out: number[] = [];
      for (const [shard, h] of held) if (h.validUntil > t && !releasing.has(shard)) out.push(shard);
      return out.length === SHARD_COUNT ? null : out;
    },
    get owned(): number {
      return held.size;
    },
    /** Stops the rounds and gives every shard back at once, then leaves (graceful stop). */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      await ticking;
      const mine = [...held].map(([shard, h]) => ({ shard, generation: h.generation }));
      held.clear();
      try {
        if (mine.length > 0) await shards.release(processId, mine);
        await shards.leave(processId);
      } catch (e) {
        logger.warn("giving shards back failed; they expire on their own", { error: e as Error });
      }
    },
  };
}
