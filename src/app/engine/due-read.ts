import type { Delivery } from "../../domain/delivery.ts";
import { shardOf } from "../../domain/shards.ts";
import type { DeliveryRepository } from "../ports/deliveries.ts";
import type { Clock } from "../ports/system.ts";
import { readDue } from "./claim.ts";
import type { FifoHeads } from "./fifo.ts";
import type { Holds } from "./holds.ts";
import type { ShardOwnership } from "./ownership.ts";
import type { Pacer } from "./pace.ts";
import type { DueQueue } from "./queue.ts";
import type { ReadDemand } from "./read-demand.ts";
import type { ScheduledRead } from "./scheduled-read.ts";
import type { Claimed } from "./work.ts";

export interface DueReaderDeps {
  deliveries: Pick<DeliveryRepository, "due">;
  clock: Clock;
  queue: DueQueue;
  fifo: FifoHeads;
  holds: Holds;
  demand: ReadDemand;
  /** Rate-limited endpoints' turns soon. */
  pace: Pick<Pacer, "rooms">;
  /** The shards this process may claim from now (null: all), and whether it may start work of one. */
  ownership: Pick<ShardOwnership, "claimable" | "mayClaim">;
  /** Lets go of held deliveries. */
  release(ids: readonly string[]): void;
  /** The read took from `started` to `ended` (monotonic ms). */
  measured(started: number, ended: number): void;
  /** What the read took (queued, or claimed as heads): never taken again from the due channel. */
  took?(deliveries: readonly Delivery[]): void;
  /** Told when each read starts and what it answered of what comes due next (scheduled-read.ts). */
  scheduled?: Pick<ScheduledRead, "reading" | "landed" | "horizon">;
  /** Whether announcements of other processes' work get through now (absent: no other process). */
  live?(): boolean;
}

/**
 * Stage 2, claim: one read of due work into the queue (FIFO endpoints' work comes back as their heads,
 * which are not queued: each is sent at once or not at all). Owns the read on its way, so a shard
 * being given back waits for it to land (`landed`) before it drops what is queued of the shard.
 */
export function dueReader(deps: DueReaderDeps, options: { queueSize: number; queueDepth: number }) {
  const { queue, fifo, holds, demand } = deps;
  /** Settles when the claim read in progress (if any) has landed. */
  let claiming: Promise<unknown> = Promise.resolve();

  async function read(room: number): Promise<{ heads: Claimed[]; more: boolean }> {
    const started = performance.now();
    const now = deps.clock.now();
    const t = now.getTime();
    await fifo.refresh();
    // An endpoint that became FIFO is sent only through its head from now on.
    deps.release(queue.drop(fifo.isFifo).map((d) => d.id));
    const full = queue.full();
    const exclude = new Set([...full, ...fifo.excluded(t)]);
    // Out of turns for now: left out of the read, so they do not fill the page (ADR 16).
    for (const [id, turns] of deps.pace.rooms()) if (turns <= 0) exclude.add(id);
    queue.reading(exclude);
    // Left out for a full lane, an endpoint may have more due: read once its lane runs low (the tick's
    // read, which found it before, waits for what comes due next; ADR 30).
    for (const id of full) queue.markCut(id);
    demand.reading();
    const letGo = holds.watchReleases();
    const shards = deps.ownership.claimable();
    const start = deps.scheduled?.reading(t, shards, deps.live?.() ?? true);
    const read = await readDue(deps.deliveries, {
      now,
      shards,
      limit: Math.min(options.queueSize, Math.max(room, options.queueSize - queue.size)),
      perEndpoint: options.queueDepth,
      exclude,
      held: holds.entries(),
      until: deps.scheduled?.horizon(t),
    })
      .catch((e: unknown) => {
        // Nothing was read: whatever made this read worth making still holds.
        demand.all();
        throw e;
      })
      .finally(letGo.close);
    deps.measured(started, performance.now());
    // A full page answers nothing about what it did not read: the next ticks read until a read says.
    if (start) deps.scheduled!.landed(start, read.more ? undefined : read.next);
    if (read.more) demand.all();
    // A shard given back (or lost) while the read was on its way is no longer this process's to send;
    // what is held, or was let go while the read was on its way (sent and recorded), is not sent again.
    const mine = read.due.filter(
      (d) => deps.ownership.mayClaim(shardOf(d.webhookId)) && !holds.has(d.id) && !letGo.has(d.id),
    );
    const queued = queue.add(
      mine.filter((d) => !fifo.isFifo(d.webhookId)),
      performance.now(),
    );
    for (const d of queued) holds.hold(d);
    // A full page may have cut any endpoint it read before its lane's depth: each is read again once its
    // lane runs low (a lane half full is left out of the next read, so nothing else would read it).
    if (read.more) for (const d of queued) queue.markCut(d.webhookId);
    deps.took?.(queued);
    // FIFO endpoints' work is claimed as their heads, one each (ADR 16).
    const heads = await fifo.heads(
      mine.filter((d) => fifo.isFifo(d.webhookId)).map((delivery) => ({ delivery })),
      now,
    );
    const ours = heads.filter(
      (c) => deps.ownership.mayClaim(shardOf(c.delivery.webhookId)) && !holds.has(c.delivery.id),
    );
    for (const c of ours) holds.hold(c.delivery);
    deps.took?.(ours.map((c) => c.delivery));
    return { heads: ours, more: read.more };
  }

  return {
    /** Reads due work into the queue with room for `room` to start now; answers the FIFO heads and whether the page was full. */
    read(room: number): Promise<{ heads: Claimed[]; more: boolean }> {
      const reading = read(room);
      claiming = reading.catch(() => {});
      return reading;
    },
    /** Settles once the read on its way (if any) has landed. */
    landed(): Promise<unknown> {
      return claiming;
    },
  };
}
