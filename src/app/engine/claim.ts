import type { Delivery } from "../../domain/delivery.ts";
import type { DeliveryRepository } from "../ports/deliveries.ts";
import type { DueQueue, MayTake } from "./queue.ts";
import type { Claimed } from "./work.ts";

export interface ReadInput {
  now: Date;
  /** Shards this process owns and may claim from now; null for all of them. */
  shards: readonly number[] | null;
  /** Most records read. */
  limit: number;
  /** Most records of one endpoint worth reading (its lane's depth in the queue). */
  perEndpoint: number;
  /**
   * Endpoints left out of the read: their lane is full enough, their rate limit has no turn soon, or
   * they are FIFO endpoints that are busy or blocked.
   */
  exclude: ReadonlySet<string>;
  /** Deliveries held already (queued, in flight or waiting for their record), with their endpoint. */
  held: Iterable<[string, { webhookId: string }]>;
  /** Ask the store when the shards' next pending delivery comes due, up to this (DueRequest.until). */
  until?: Date;
}

/**
 * Stage 2, claim: one read of due work in the owned shards, earliest first. Nothing is written: the
 * owner of a shard is its only claimer, so holding a delivery is remembering it. What is held is left
 * out of the read, by endpoint where the whole endpoint is left out and by id for the others, so the
 * list sent is as short as it can be. `more` says whether another read now could find more (the page
 * was full).
 */
export async function readDue(
  deliveries: Pick<DeliveryRepository, "due">,
  input: ReadInput,
): Promise<{ due: Delivery[]; more: boolean; next?: Date | null }> {
  if (input.limit <= 0) return { due: [], more: false };
  // No shard to read: nothing of this process's comes due until one is claimable (and read then).
  if (input.shards !== null && input.shards.length === 0)
    return { due: [], more: false, next: input.until ? null : undefined };
  const excludeIds: string[] = [];
  for (const [id, h] of input.held) if (!input.exclude.has(h.webhookId)) excludeIds.push(id);
  const due = await deliveries.due({
    now: input.now,
    shards: input.shards,
    limit: input.limit,
    excludeWebhookIds: [...input.exclude],
    excludeIds,
    perEndpointLimit: input.perEndpoint,
    until: input.until,
  });
  // A full page may have left due work unread; a short one saw all there is to take now.
  return { due, more: due.length === input.limit, next: due.next };
}

/**
 * The per-endpoint room (one rule, for the queue and for FIFO heads alike): an endpoint takes one more
 * while what it has in flight plus what this round took stays under the cap, and, when it is rate
 * limited, under the turns its pace allows soon.
 */
export function roomRule(
  cap: number,
  inFlight: ReadonlyMap<string, number>,
  rooms: ReadonlyMap<string, number> = new Map(),
): MayTake {
  return (webhookId, taken) =>
    (inFlight.get(webhookId) ?? 0) + taken < cap &&
    taken < (rooms.get(webhookId) ?? Number.POSITIVE_INFINITY);
}

/** In order, at most `limit`, each only while `mayTake` allows. */
export function pickWithinRoom(due: readonly Delivery[], limit: number, mayTake: MayTake): Delivery[] {
  const picked: Delivery[] = [];
  const taken = new Map<string, number>();
  for (const d of due) {
    if (picked.length >= limit) break;
    const mine = taken.get(d.webhookId) ?? 0;
    if (!mayTake(d.webhookId, mine)) continue;
    taken.set(d.webhookId, mine + 1);
    picked.push(d);
  }
  return picked;
}

/**
 * One round's take within `room` at `now` (monotonic ms): FIFO heads first (each sent now or not at all:
 * `left` are the heads with no room, which stay pending), then the queue's earliest, each made a claim by
 * `claim` (the hand-over adds the endpoint its publish read); `expired` waited too long in the queue.
 */
export function takeWithinRoom(
  heads: readonly Claimed[],
  queue: Pick<DueQueue, "take">,
  room: number,
  fits: MayTake,
  now: number,
  claim: (d: Delivery, now: number) => Claimed = (delivery) => ({ delivery }),
): { claimed: Claimed[]; headIds: Set<string>; left: string[]; expired: string[] } {
  const start = pickWithinRoom(
    heads.map((c) => c.delivery),
    room,
    fits,
  );
  const headIds = new Set(start.map((d) => d.id));
  const left = heads.filter((c) => !headIds.has(c.delivery.id)).map((c) => c.delivery.id);
  const { taken, expired } = queue.take(room - start.length, fits, now);
  const claimed = [
    ...start.map((delivery) => ({ delivery, head: true })),
    ...taken.map((d) => claim(d, now)),
  ];
  return { claimed, headIds, left, expired: expired.map((d) => d.id) };
}
