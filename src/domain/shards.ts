/**
 * Endpoint shards: due work is split by endpoint into a fixed number of shards, and each shard has one
 * owning process at a time (ADR 9). An endpoint's shard never changes, so all its work has one home.
 */
export const SHARD_COUNT = 256;

/** 32-bit FNV-1a of a string's UTF-16 code units: stable across runtimes and versions. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The shard of an endpoint's deliveries (stored on each delivery at insert). */
export function shardOf(webhookId: string): number {
  return fnv1a(webhookId) % SHARD_COUNT;
}

/**
 * Which live process should own each shard: every shard ranks the processes by a hash of the pair
 * (rendezvous hashing, so a process joining or leaving moves few shards) and goes to the first one
 * that has not reached its share, ceil(shards / processes). Every process computes the same answer
 * from the same list, whatever its order; a process owns at most one shard more than any other.
 */
export function assignShards(processes: readonly string[], shardCount = SHARD_COUNT): Map<number, string> {
  const live = [...new Set(processes)].sort();
  const out = new Map<number, string>();
  if (live.length === 0) return out;
  const share = Math.ceil(shardCount / live.length);
  const owned = new Map(live.map((p) => [p, 0]));
  for (let shard = 0; shard < shardCount; shard++) {
    const ranked = live
      .map((p) => ({ p, score: fnv1a(`${p}/${shard}`) }))
      .sort((a, b) => b.score - a.score || (a.p < b.p ? -1 : 1));
    const pick = ranked.find((r) => (owned.get(r.p) ?? 0) < share) ?? ranked[0]!;
    owned.set(pick.p, (owned.get(pick.p) ?? 0) + 1);
    out.set(shard, pick.p);
  }
  return out;
}
