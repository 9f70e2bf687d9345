import type { Delivery } from "../../domain/delivery.ts";
import { shardOf } from "../../domain/shards.ts";
import type { AttemptResult } from "../ports/deliveries.ts";
import { roomRule, takeWithinRoom } from "./claim.ts";
import type { FifoHeads } from "./fifo.ts";
import type { InFlight } from "./in-flight.ts";
import type { ShardOwnership } from "./ownership.ts";
import type { Pacer } from "./pace.ts";
import type { DueQueue } from "./queue.ts";
import type { ReadDemand } from "./read-demand.ts";
import type { Claimed, Prepared } from "./work.ts";

export interface ClaimOnceDeps {
  demand: Pick<ReadDemand, "mustRead" | "all">;
  /** Stage 2's read of due work into the queue (`due-read.ts`). */
  read(room: number): Promise<{ heads: Claimed[]; more: boolean }>;
  queue: Pick<DueQueue, "drop" | "take">;
  inFlight: InFlight;
  ownership: Pick<ShardOwnership, "mayClaim">;
  pace: Pick<Pacer, "rooms" | "admit">;
  fifo: Pick<FifoHeads, "learned">;
  /** A delivery taken from the queue made a claim (the hand-over adds the endpoint its publish read). */
  claim(delivery: Delivery, now: number): Claimed;
  /** Stage 3 (`prepare.ts`). */
  prepare(
    claimed: readonly Claimed[],
  ): Promise<{ ready: Prepared[]; finished: AttemptResult[]; waiting: Delivery[] }>;
  /** Lets go of held deliveries. */
  release(ids: readonly string[]): void;
  /** Stops holding a claimed delivery without sending it: it stays pending, for a later claim. */
  unhold(d: { id: string; webhookId: string }): void;
  /** A result to record (finished without a send). */
  record(r: AttemptResult, webhookId: string): void;
  /** Their event is not stored yet: moved a few seconds on (`postpone.ts`). */
  postpone(waiting: readonly Delivery[]): void;
  /** Slots were freed without a send: what is queued behind them may go next. */
  freed(): void;
  /** May the engine take new work now (`mayTake` in engine.ts). */
  mayTake(): boolean;
}

/**
 * Stages 2 and 3, one claim: take what fits (reading the database only when it must), prepare it, start
 * it. Answers whether another claim now could take more. Owns no state: what it takes is held in
 * `holds.ts` and counted in `in-flight.ts`.
 */
export function claimOnce(
  deps: ClaimOnceDeps,
  options: { concurrency: number; endpointConcurrency: number },
) {
  const { demand, queue, inFlight, ownership, pace, release, unhold } = deps;
  return async (): Promise<boolean> => {
    let heads: Claimed[] = [];
    let more = false;
    if (demand.mustRead()) ({ heads, more } = await deps.read(options.concurrency - inFlight.total));
    // What is queued of shards this process may no longer claim from is let go, unsent.
    release(queue.drop((id) => !ownership.mayClaim(shardOf(id))).map((d) => d.id));
    const fits = roomRule(options.endpointConcurrency, inFlight.perEndpoint, pace.rooms());
    const now = performance.now();
    const take = takeWithinRoom(heads, queue, options.concurrency - inFlight.total, fits, now, deps.claim);
    // Heads with no room now stay pending (the next read finds them again); what waited too long is read again.
    release([...take.left, ...take.expired]);
    if (take.expired.length > 0) demand.all();
    const { claimed, headIds } = take;
    if (claimed.length === 0) return more && deps.mayTake();
    // Counted against the caps from here until the send ends.
    for (const { delivery } of claimed) inFlight.add(delivery.webhookId);
    let prepared: Awaited<ReturnType<ClaimOnceDeps["prepare"]>>;
    try {
      prepared = await deps.prepare(claimed);
    } catch (e) {
      for (const { delivery } of claimed) unhold(delivery);
      throw e;
    }
    for (const r of prepared.finished) {
      const { webhookId } = claimed.find((c) => c.delivery.id === r.id)!.delivery;
      inFlight.remove(webhookId);
      deps.record(r, webhookId);
    }
    // Finished without a send, their slots are free as a completion's are: what is queued behind them goes next.
    if (prepared.finished.length > 0) deps.freed();
    if (prepared.waiting.length > 0) {
      for (const d of prepared.waiting) inFlight.remove(d.webhookId);
      deps.postpone(prepared.waiting);
    }
    // The endpoint was read fresh: one that became FIFO is sent only through its head from now on.
    const ready = prepared.ready.filter((p) => {
      if (p.endpoint.ordering !== "fifo" || headIds.has(p.delivery.id)) return true;
      deps.fifo.learned(p.endpoint.id);
      release(queue.drop((id) => id === p.endpoint.id).map((d) => d.id));
      unhold(p.delivery);
      return false;
    });
    pace.admit(ready);
    return more && deps.mayTake();
  };
}
