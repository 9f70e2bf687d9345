import type { Delivery } from "../../domain/delivery.ts";

export interface QueueOptions {
  /** Most due deliveries kept for one endpoint. */
  depth: number;
  /** A delivery kept longer than this is dropped unsent (it stays pending) and read again. */
  maxAgeMs: number;
}

/** Whether one more delivery of the endpoint may start now, `taken` having been taken in this round. */
export type MayTake = (webhookId: string, taken: number) => boolean;

/**
 * Stage 2, the owner's queue of due work (ADR 9): what a claim read brought back beyond the room free
 * at that moment, per endpoint in due order. Slots freed later are filled from here, so the database is
 * read only when new work may have arrived or an endpoint runs low, not once per freed slot: on FerretDB
 * v1 every due read decodes every pending record, so reading ten at a time cost a scan per ten
 * deliveries. Everything queued is held by the engine (no read returns it again) but not in flight;
 * dropping it sends nothing and leaves it pending in the database, for a later read or the next owner.
 */
export function dueQueue(options: QueueOptions) {
  const lanes = new Map<string, { at: number; delivery: Delivery }[]>();
  /** Endpoints that had more due than their lane could keep: read them again once it runs low. */
  const cut = new Set<string>();
  let size = 0;

  /** At least half a lane: a read need not bring more of the endpoint now. */
  const isFull = (webhookId: string) => (lanes.get(webhookId)?.length ?? 0) * 2 >= options.depth;

  return {
    get size() {
      return size;
    },

    /** Keeps what the read found (in due order) up to each lane's depth; answers what it kept. */
    add(due: readonly Delivery[], at: number): Delivery[] {
      const kept: Delivery[] = [];
      for (const delivery of due) {
        const lane = lanes.get(delivery.webhookId) ?? [];
        if (lane.length === 0) lanes.set(delivery.webhookId, lane);
        if (lane.length >= options.depth) {
          cut.add(delivery.webhookId);
          continue;
        }
        lane.push({ at, delivery });
        kept.push(delivery);
        // A full lane may have left more of its endpoint unread.
        if (lane.length >= options.depth) cut.add(delivery.webhookId);
      }
      size += kept.length;
      return kept;
    },

    /**
     * Takes up to `limit` in due order across endpoints, each only while `mayTake` allows. What waited
     * longer than maxAgeMs comes back as `expired` instead: the caller lets go of it, and reads it again.
     */
    take(limit: number, mayTake: MayTake, now: number): { taken: Delivery[]; expired: Delivery[] } {
      const expired: Delivery[] = [];
      for (const id of [...lanes.keys()]) {
        const lane = lanes.get(id);
        if (!lane) continue;
        let old = 0;
        while (old < lane.length && now - lane[old]!.at > options.maxAgeMs) old++;
        if (old > 0) {
          expired.push(...lane.splice(0, old).map((q) => q.delivery));
          size -= old;
          if (lane.length === 0) lanes.delete(id);
        }
      }
      const taken: Delivery[] = [];
      const count = new Map<string, number>();
      const next = new Map<string, number>();
      while (taken.length < limit) {
        // The earliest head among the lanes that may take one more.
        let best: string | null = null;
        let bestAt = Number.POSITIVE_INFINITY;
        for (const [id, lane] of lanes) {
          const i = next.get(id) ?? 0;
          if (i >= lane.length || !mayTake(id, count.get(id) ?? 0)) continue;
          const t = lane[i]!.delivery.scheduledAt.getTime();
          if (t < bestAt) {
            best = id;
            bestAt = t;
          }
        }
        if (best === null) break;
        const i = next.get(best) ?? 0;
        taken.push(lanes.get(best)![i]!.delivery);
        next.set(best, i + 1);
        count.set(best, (count.get(best) ?? 0) + 1);
      }
      for (const [id, n] of next) {
        const lane = lanes.get(id)!;
        lane.splice(0, n);
        size -= n;
        if (lane.length === 0) lanes.delete(id);
      }
      return { taken, expired };
    },

    /** Drops and answers what is queued for the endpoints for which `drop` is true (a shard given away). */
    drop(drop: (webhookId: string) => boolean): Delivery[] {
      const out: Delivery[] = [];
      for (const [id, lane] of lanes) {
        if (!drop(id)) continue;
        for (const q of lane) out.push(q.delivery);
        size -= lane.length;
        lanes.delete(id);
      }
      return out;
    },

    isFull,

    /** More of the endpoint is due than is queued (a publish just stored some): read once it runs low. */
    markCut(webhookId: string): void {
      cut.add(webhookId);
    },

    /** Endpoints with enough queued that a read need not bring more of them. */
    full(): string[] {
      const out: string[] = [];
      for (const id of lanes.keys()) if (isFull(id)) out.push(id);
      return out;
    },

    /** An endpoint had more due than its lane kept, and its lane is now low: a read would find work. */
    runningLow(): boolean {
      for (const id of cut) if (!isFull(id)) return true;
      return false;
    },

    /** A read of every endpoint but `excluded` is being made: it finds what is left of the others. */
    reading(excluded: ReadonlySet<string>): void {
      for (const id of cut) if (!excluded.has(id)) cut.delete(id);
    },
  };
}

export type DueQueue = ReturnType<typeof dueQueue>;
