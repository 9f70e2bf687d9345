import type { Delivery } from "../../domain/delivery.ts";
import { shardOf } from "../../domain/shards.ts";

const bump = <K>(m: Map<K, number>, k: K, by: number) => {
  const n = (m.get(k) ?? 0) + by;
  if (n <= 0) m.delete(k);
  else m.set(k, n);
};

/**
 * What this process holds: every delivery from the claim that took it until its result is recorded
 * or it is let go unsent (queued, waiting for its turn, in flight, or waiting for its record), counted
 * per shard and per endpoint. A due read leaves held deliveries out; a shard being given back waits
 * until nothing of it is held (`drained`), so its next owner never sends what this one still may.
 */
export function holds() {
  const held = new Map<string, { shard: number; webhookId: string }>();
  const perShard = new Map<number, number>();
  const perEndpoint = new Map<string, number>();
  const drainWaiters = new Map<number, (() => void)[]>();
  /** Open watches (`watchReleases`): each collects the ids let go while it is open. */
  const watches = new Set<Set<string>>();

  return {
    /** Holds a delivery from here until it is released. */
    hold(d: Delivery): void {
      const shard = shardOf(d.webhookId);
      held.set(d.id, { shard, webhookId: d.webhookId });
      bump(perShard, shard, 1);
      bump(perEndpoint, d.webhookId, 1);
    },
    /** Lets go of these (unknown ids are ignored); answers the endpoints of those it held. */
    release(ids: readonly string[]): string[] {
      const endpoints: string[] = [];
      for (const id of ids) {
        const h = held.get(id);
        if (h === undefined) continue;
        held.delete(id);
        for (const w of watches) w.add(id);
        bump(perShard, h.shard, -1);
        bump(perEndpoint, h.webhookId, -1);
        if (!perShard.has(h.shard)) for (const w of drainWaiters.get(h.shard)?.splice(0) ?? []) w();
        endpoints.push(h.webhookId);
      }
      return endpoints;
    },
    has(id: string): boolean {
      return held.has(id);
    },
    /**
     * Remembers what is let go from now until `close`. A due read opens one as it starts: it may still
     * find, as pending, a delivery held when it started (left out of it by id) or held after, that was
     * sent and recorded and let go before the read landed (its snapshot was older than the record). The
     * read drops what was let go meanwhile, so it is never sent again.
     */
    watchReleases(): { has(id: string): boolean; close(): void } {
      const gone = new Set<string>();
      watches.add(gone);
      return { has: (id) => gone.has(id), close: () => void watches.delete(gone) };
    },
    /** Every held delivery with its endpoint (a due read leaves them out). */
    entries(): Iterable<[string, { webhookId: string }]> {
      return held.entries();
    },
    /** How many deliveries of the endpoint are held. */
    ofEndpoint(webhookId: string): number {
      return perEndpoint.get(webhookId) ?? 0;
    },
    /** Whether anything of the shard is held. */
    holdsShard(shard: number): boolean {
      return perShard.has(shard);
    },
    /**
     * Resolves once nothing of the shard is held. The waiter is registered before this returns, so a
     * release triggered right after (a flush of results) is not missed.
     */
    drained(shard: number): Promise<void> {
      if (!perShard.has(shard)) return Promise.resolve();
      return new Promise<void>((resolve) => {
        drainWaiters.set(shard, [...(drainWaiters.get(shard) ?? []), resolve]);
      });
    },
    get size(): number {
      return held.size;
    },
  };
}

export type Holds = ReturnType<typeof holds>;
