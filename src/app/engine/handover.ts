import type { Delivery } from "../../domain/delivery.ts";
import type { Endpoint } from "../../domain/endpoint.ts";
import { shardOf } from "../../domain/shards.ts";
import type { AcceptedWork } from "../ports/sending.ts";
import type { DueSignals } from "../ports/store.ts";
import type { FifoHeads } from "./fifo.ts";
import type { Holds } from "./holds.ts";
import type { ShardOwnership } from "./ownership.ts";
import type { DueQueue } from "./queue.ts";
import type { Claimed } from "./work.ts";

/**
 * How long an endpoint handed over by a publish (read by it moments before) may stand in for a read of
 * it: a first attempt taken from the queue later than this after the hand-over reads its endpoint as
 * every other attempt does (ADR 9, "The publish hand-over").
 */
export const HANDOVER_FRESH_MS = 1_000;

export interface HandoverDeps {
  queue: Pick<DueQueue, "size" | "add">;
  /** Most deliveries queued in all. */
  queueSize: number;
  /** Due work stored for other processes' shards is announced through this where the store can (ADR 18). */
  signals: Pick<DueSignals, "live" | "announce"> | null;
  /** Whether the engine runs (a stopped one queues nothing). */
  running(): boolean;
  /** Whether this process holds the shard (any tenure), and whether it may start work of it now. */
  ownership: Pick<ShardOwnership, "tenure" | "mayClaim">;
  fifo: Pick<FifoHeads, "isFifo">;
  holds: Pick<Holds, "has" | "hold">;
  /** Work stored for the endpoint that was not handed over: the next claim reads it. */
  unread(webhookId: string): void;
  /** What was queued here: never taken again from the due channel. */
  took?(deliveries: readonly Delivery[]): void;
  /** Monotonic ms (performance.now()). */
  now?: () => number;
}

/**
 * The publish hand-over (ADR 9): a publish in this process queues its first deliveries as it wrote
 * them, with the endpoints it read, for the shards this process may claim from now, so they are sent
 * without a due read or an endpoints read. Owns the queued first deliveries' endpoints and when they
 * were read; an entry lives as long as its delivery is queued.
 */
export function handover(deps: HandoverDeps) {
  const handed = new Map<string, { endpoint: Endpoint; at: number }>();

  return {
    /**
     * The same as a due read finding them, without the read. Held from here like anything read, so a
     * read already on its way drops its copy when it lands (claims run one at a time, and a queued
     * delivery is taken only by the claim after that read), and later reads leave it out until it is
     * recorded. What is not queued here is read the existing way.
     */
    accept(accepted: AcceptedWork): void {
      const endpoints = new Map(accepted.endpoints.map((e) => [e.id, e]));
      const direct: Delivery[] = [];
      /** Endpoints of shards this process does not hold that got work: told to their owners where the store can. */
      const theirs = new Set<string>();
      for (const d of accepted.deliveries) {
        const endpoint = endpoints.get(d.webhookId);
        const shard = shardOf(d.webhookId);
        if (deps.signals?.live && deps.ownership.tenure(shard) === null) theirs.add(d.webhookId);
        else if (
          deps.running() &&
          endpoint !== undefined &&
          // FIFO endpoints send only through their head, in order (ADR 16): left to the due read.
          endpoint.ordering !== "fifo" &&
          !deps.fifo.isFifo(d.webhookId) &&
          deps.ownership.mayClaim(shard) &&
          d.status === "pending" &&
          !deps.holds.has(d.id) &&
          deps.queue.size + direct.length < deps.queueSize
        )
          direct.push(d);
        else deps.unread(d.webhookId);
      }
      // Their owner reads them when told; a read here would find none of them (it reads this process's
      // shards). Given the work, a store that carried it in the publish itself sends nothing more.
      if (theirs.size > 0) {
        const event = accepted.event;
        deps.signals!.announce([...theirs], {
          event,
          deliveries: accepted.deliveries.filter((d) => theirs.has(d.webhookId)),
        });
      }
      const at = (deps.now ?? (() => performance.now()))();
      // A lane at its depth keeps none of them and is marked cut: the rest is read once it runs low.
      const kept = deps.queue.add(direct, at);
      for (const d of kept) {
        deps.holds.hold(d);
        handed.set(d.id, { endpoint: endpoints.get(d.webhookId)!, at });
      }
      deps.took?.(kept);
    },
    /**
     * Work stored outside a publish for these endpoints (a manual retry, a replay): as a publish's, those
     * of other processes' shards are told to their owners where the store can, the rest is read here.
     * Answers whether anything is to be read here.
     */
    stored(endpointIds: readonly string[]): boolean {
      const theirs = endpointIds.filter(
        (id) => deps.signals?.live && deps.ownership.tenure(shardOf(id)) === null,
      );
      for (const id of endpointIds) if (!theirs.includes(id)) deps.unread(id);
      if (theirs.length > 0) deps.signals!.announce(theirs);
      return theirs.length < endpointIds.length;
    },
    /** A queued delivery is taken at `at`: with the endpoint its publish read, if that is fresh enough. */
    claim(delivery: Delivery, at: number): Claimed {
      const h = handed.get(delivery.id);
      if (!h) return { delivery };
      handed.delete(delivery.id);
      return at - h.at <= HANDOVER_FRESH_MS ? { delivery, endpoint: h.endpoint } : { delivery };
    },
    /** What a publish read of the endpoint no longer holds (it was disabled): its queued first attempts read it again. */
    stale(endpointId: string): void {
      for (const h of handed.values()) if (h.endpoint.id === endpointId) h.at = Number.NEGATIVE_INFINITY;
    },
    /** The deliveries were let go. */
    forget(ids: readonly string[]): void {
      for (const id of ids) handed.delete(id);
    },
    get size(): number {
      return handed.size;
    },
  };
}
