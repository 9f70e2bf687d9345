import type { Delivery } from "../../domain/delivery.ts";
import { shardOf } from "../../domain/shards.ts";
import type { StoredEvent } from "../ports/events.ts";
import type { DueSignals, HandedWork } from "../ports/store.ts";
import type { FifoHeads } from "./fifo.ts";
import type { Holds } from "./holds.ts";
import type { ShardOwnership } from "./ownership.ts";
import type { DueQueue } from "./queue.ts";

export interface CarriedDeps {
  /** The channel's barrier: resolves once every announcement committed before the call was heard. */
  signals: Required<Pick<DueSignals, "barrier">>;
  ownership: Pick<ShardOwnership, "tenure" | "mayClaim">;
  fifo: Pick<FifoHeads, "isFifo">;
  holds: Pick<Holds, "has" | "hold">;
  queue: Pick<DueQueue, "size" | "add">;
  /** Most deliveries queued in all. */
  queueSize: number;
  /** Whether the engine runs (a stopped one takes nothing). */
  running(): boolean;
  /** The carried event, so the first attempts need not read it (prepare's cache). */
  remember(event: StoredEvent): void;
  /** Monotonic ms (performance.now()). */
  now?: () => number;
}

export interface CarriedOptions {
  /** A barrier clears what was taken otherwise at least this often while there is some (bounds the memory). */
  clearEveryMs: number;
  /** ... or sooner once this many are remembered. */
  clearAt: number;
}

/**
 * Work another process's publish carried to this one through the due channel (ADR 30), queued without
 * a due read or an events read, as exactly as a read would: only in a shard this process may claim
 * from, never an endpoint sent in order (FIFO: its head is read), never a delivery held here, and never
 * one this process took another way (read, or handed over by its own publish) and may have sent and let
 * go already. Owns the memory of what was taken another way and of the shards whose tenure is known to
 * be older than the work heard for them; both are settled by the channel's barrier, which relies on
 * announcements reaching a listener in commit order:
 *
 * - a delivery taken another way was stored (committed) before it was taken, so its announcement comes
 *   before the marker of a barrier started after that: remembered until such a barrier resolves;
 * - a shard's previous owner may have sent (and recorded) a delivery stored before this process took
 *   the shard: carried work of a shard is taken only once a barrier started after the take resolved,
 *   so its publish committed after the take, when no other process could claim from the shard.
 *
 * What is not taken is left to a due read (answered as endpoints to read); what is skipped as held or
 * taken already needs none.
 */
export function carriedWork(deps: CarriedDeps, options: CarriedOptions) {
  const now = deps.now ?? (() => performance.now());
  /** The number of the next barrier to start; barriers resolve in order. */
  let nextBarrier = 1;
  /** Deliveries taken another way, with the barrier that clears each, in that barrier's order. */
  const taken = new Map<string, number>();
  let oldest = 0;
  /** Per shard, the tenure (generation) known to be older than every announcement heard from now. */
  const settled = new Map<number, number>();
  /** Per shard, a tenure waiting for the barrier that settles it. */
  const settling = new Map<number, { generation: number; barrier: number }>();
  /** Nothing carried is taken until this barrier has resolved (the memory overflowed and was dropped). */
  let fence = 0;
  let resolvedUpTo = 0;
  let barrierOnItsWay = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;

  function resolved(k: number): void {
    resolvedUpTo = Math.max(resolvedUpTo, k);
    for (const [id, b] of taken) {
      if (b > k) break;
      taken.delete(id);
    }
    // What is left waits a whole interval: barriers while publishes go on are spaced, not back to back.
    oldest = now();
    for (const [shard, s] of settling)
      if (s.barrier <= k) {
        settled.set(shard, s.generation);
        settling.delete(shard);
      }
  }

  function barrier(): void {
    if (timer) clearTimeout(timer);
    timer = null;
    if (barrierOnItsWay || stopped) return;
    barrierOnItsWay = true;
    const k = nextBarrier++;
    void deps.signals.barrier().then(() => {
      barrierOnItsWay = false;
      resolved(k);
      schedule();
    });
  }

  /** A barrier now when a tenure waits for one; later while deliveries are remembered. */
  function schedule(): void {
    if (stopped || barrierOnItsWay) return;
    if (settling.size > 0 || taken.size >= options.clearAt || resolvedUpTo < fence) barrier();
    else if (taken.size > 0 && timer === null)
      timer = setTimeout(barrier, Math.max(0, oldest + options.clearEveryMs - now()));
    timer?.unref?.();
  }

  return {
    /** Deliveries this process took another way (a due read, its own publish): never taken again from the channel. */
    tookOtherwise(deliveries: readonly Delivery[]): void {
      for (const d of deliveries) {
        if (d.attempt !== 1) continue;
        if (taken.size === 0) oldest = now();
        taken.delete(d.id);
        taken.set(d.id, nextBarrier);
      }
      // No barrier comes back (the channel is down): rather than remember without end, forget it all
      // and take nothing carried until a barrier started after this has resolved.
      if (taken.size > options.clearAt * 5) {
        taken.clear();
        fence = nextBarrier;
      }
      schedule();
    },

    /**
     * Queues and holds what it may of carried work for shards this process holds; answers the endpoints
     * whose work it left to a due read, and whether it queued any.
     */
    take(work: HandedWork): { unread: Set<string>; queued: boolean } {
      const unread = new Set<string>();
      const direct: Delivery[] = [];
      for (const d of work.deliveries) {
        const shard = shardOf(d.webhookId);
        const tenure = deps.ownership.tenure(shard);
        if (tenure === null) continue;
        if (resolvedUpTo < fence) unread.add(d.webhookId);
        else if (settled.get(shard) !== tenure.generation) {
          // Held since moments ago, perhaps: its previous owner may have sent this.
          const s = settling.get(shard);
          if (s?.generation !== tenure.generation)
            settling.set(shard, { generation: tenure.generation, barrier: nextBarrier });
          unread.add(d.webhookId);
        } else if (deps.holds.has(d.id) || taken.has(d.id)) {
          // This process has it, or had it (sent, perhaps): nothing more to do.
        } else if (
          deps.running() &&
          deps.ownership.mayClaim(shard) &&
          !deps.fifo.isFifo(d.webhookId) &&
          d.status === "pending" &&
          d.attempt === 1 &&
          deps.queue.size + direct.length < deps.queueSize
        )
          direct.push(d);
        else unread.add(d.webhookId);
      }
      let queued = false;
      if (direct.length > 0) {
        deps.remember(work.event);
        // A lane at its depth keeps none of them and is marked cut: the rest is read once it runs low.
        for (const d of deps.queue.add(direct, now())) {
          deps.holds.hold(d);
          queued = true;
        }
      }
      schedule();
      return { unread, queued };
    },

    /** How many deliveries taken otherwise are remembered. */
    get remembered(): number {
      return taken.size;
    },

    stop(): void {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

export type CarriedWork = ReturnType<typeof carriedWork>;
