import type { Delivery } from "../../domain/delivery.ts";
import type { DeliveryRepository } from "../ports/deliveries.ts";
import type { Claimed } from "./work.ts";

export interface ClaimInput {
  now: Date;
  /** Shards this process owns and may claim from now; null for all of them. */
  shards: readonly number[] | null;
  /** Deliveries this process may start now (its global cap minus what is in flight). */
  room: number;
  /** The per-endpoint cap and what each endpoint has in flight now. */
  endpointCap: number;
  inFlight: ReadonlyMap<string, number>;
  /** Rate-limited endpoints' room (sends their pace allows soon, less those waiting); 0 leaves one out. */
  rooms?: ReadonlyMap<string, number>;
  /** Endpoints left out of the read for another reason (FIFO endpoints busy or blocked). */
  exclude?: readonly string[];
  /** Deliveries held already (in flight or waiting for their record). */
  held: Iterable<string>;
}

/**
 * Stage 2, claim: one read of due work in the owned shards, earliest first, skipping endpoints at
 * their cap, and taking no more for an endpoint than its free room. Nothing is written: the owner of
 * a shard is its only claimer, so holding a delivery is remembering it. `more` says whether another
 * read now could find more (the page was full).
 */
export async function claimDue(
  deliveries: DeliveryRepository,
  input: ClaimInput,
  batchSize: number,
): Promise<{ claimed: Claimed[]; more: boolean }> {
  const limit = Math.min(batchSize, input.room);
  if (limit <= 0 || (input.shards !== null && input.shards.length === 0)) return { claimed: [], more: false };
  const saturated: string[] = [];
  for (const [id, n] of input.inFlight) if (n >= input.endpointCap) saturated.push(id);
  // Out of turns for now: left out of the read, so they do not fill the batch (ADR 16).
  for (const [id, room] of input.rooms ?? []) if (room <= 0) saturated.push(id);
  saturated.push(...(input.exclude ?? []));
  // Room for a few endpoints that can take only part of what they have due.
  const readLimit = Math.min(limit * 2, 1_000);
  const due = await deliveries.due({
    now: input.now,
    shards: input.shards,
    limit: readLimit,
    excludeWebhookIds: saturated,
    excludeIds: [...input.held],
    perEndpointLimit: input.endpointCap,
  });
  const claimed = pickWithinRoom(due, limit, input.endpointCap, input.inFlight, input.rooms).map(
    (delivery) => ({
      delivery,
    }),
  );
  // A full page may have left due work unread; a short one saw all there is to take now.
  return { claimed, more: due.length === readLimit && claimed.length > 0 };
}

/** In order, at most `limit`, and per endpoint no more than its cap (and its rate limit's room) leaves free. */
export function pickWithinRoom(
  due: readonly Delivery[],
  limit: number,
  cap: number,
  inFlight: ReadonlyMap<string, number>,
  rooms: ReadonlyMap<string, number> = new Map(),
): Delivery[] {
  const picked: Delivery[] = [];
  const taken = new Map<string, number>();
  for (const d of due) {
    if (picked.length >= limit) break;
    const mine = taken.get(d.webhookId) ?? 0;
    if ((inFlight.get(d.webhookId) ?? 0) + mine >= cap) continue;
    if (mine >= (rooms.get(d.webhookId) ?? Number.POSITIVE_INFINITY)) continue;
    taken.set(d.webhookId, (taken.get(d.webhookId) ?? 0) + 1);
    picked.push(d);
  }
  return picked;
}
