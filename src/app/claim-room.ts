import type { ClaimRequest } from "./ports/deliveries.ts";

/**
 * From due candidates in the order they should go out, picks at most `limit`, and for each endpoint no
 * more than the room its per-endpoint limit leaves. Both store adapters claim through this.
 */
export function pickWithinRoom<T extends { webhookId: string }>(
  candidates: readonly T[],
  r: ClaimRequest,
): T[] {
  const picked: T[] = [];
  const taken = new Map<string, number>();
  const cap = r.perEndpointLimit ?? Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    if (picked.length >= r.limit) break;
    const used = (r.busy?.[c.webhookId] ?? 0) + (taken.get(c.webhookId) ?? 0);
    if (used >= cap) continue;
    taken.set(c.webhookId, (taken.get(c.webhookId) ?? 0) + 1);
    picked.push(c);
  }
  return picked;
}

/** How many due candidates to read to fill a claim of `limit` when some endpoints may be short of room. */
export function candidateWindow(r: ClaimRequest): number {
  return r.perEndpointLimit === undefined ? r.limit : Math.min(Math.max(r.limit * 4, 100), 1000);
}
