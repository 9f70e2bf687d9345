import type { DeliveryRepository } from "../ports/deliveries.ts";
import type { EndpointRepository } from "../ports/endpoints.ts";
import type { Claimed } from "./work.ts";

export interface FifoDeps {
  endpoints: Pick<EndpointRepository, "listFifo">;
  deliveries: Pick<DeliveryRepository, "head">;
  /** Deliveries of the endpoint this process holds (claimed, until recorded or given back). */
  held(webhookId: string): number;
  /** A blocked endpoint's head may be due now: claim again. */
  wake(): void;
}

export interface FifoOptions {
  /** How often the list of endpoints with ordering "fifo" is read again. */
  refreshMs: number;
  /** The longest a blocked endpoint is left out of claims before its head is read again. */
  recheckMs: number;
}

/**
 * Stage 2b, heads (ADR 16): endpoints with ordering "fifo" get their events in acceptance order, one
 * at a time. The claim's due read includes such an endpoint only while this process holds nothing of
 * it and its head is not known to be waiting for a later time; a due delivery of it found by the read
 * is not sent as it is: the endpoint's head (its earliest pending delivery in acceptance order, due or
 * not) is read instead and claimed if it is due. A head scheduled later (a retry after a failure)
 * blocks the endpoint until then: everything behind it waits, held. Owning the shard makes this
 * exact across processes; a crash before the head's result is recorded sends the head again.
 */
export function fifoHeads(deps: FifoDeps, options: FifoOptions) {
  let ids = new Set<string>();
  let refreshedAt = Number.NEGATIVE_INFINITY;
  /** Endpoints whose head is due only later: left out of claims until then (wall-clock ms). */
  const blockedUntil = new Map<string, number>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let timerAt = Number.POSITIVE_INFINITY;
  let stopped = false;

  function wakeAt(at: number, now: number) {
    if (stopped || at >= timerAt) return;
    if (timer) clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(
      () => {
        timer = null;
        timerAt = Number.POSITIVE_INFINITY;
        deps.wake();
      },
      Math.max(0, at - now),
    );
  }

  return {
    /** Reads the list of FIFO endpoints when it is older than refreshMs (one read, any scope). */
    async refresh(): Promise<void> {
      const t = performance.now();
      if (t - refreshedAt < options.refreshMs) return;
      refreshedAt = t;
      ids = new Set(await deps.endpoints.listFifo());
      for (const id of blockedUntil.keys()) if (!ids.has(id)) blockedUntil.delete(id);
    },

    isFifo: (webhookId: string) => ids.has(webhookId),

    /** Prepare read the endpoint as FIFO before this process's list did: treat it so from now. */
    learned(webhookId: string): void {
      ids.add(webhookId);
    },

    /** FIFO endpoints the due read leaves out: something of theirs is held here, or their head is not due. */
    excluded(now: number): string[] {
      const out: string[] = [];
      for (const id of ids) {
        const until = blockedUntil.get(id);
        if (until !== undefined && until <= now) blockedUntil.delete(id);
        if (deps.held(id) > 0 || (until !== undefined && until > now)) out.push(id);
      }
      return out;
    },

    /**
     * The claim with FIFO endpoints' deliveries replaced by their heads: for each FIFO endpoint the due
     * read found work of, its head when that is due (at most one per endpoint, and none while this
     * process holds anything of it); a head due later blocks its endpoint until then.
     */
    async heads(claimed: readonly Claimed[], now: Date): Promise<Claimed[]> {
      const out: Claimed[] = [];
      const endpoints = new Set<string>();
      for (const c of claimed) {
        if (!ids.has(c.delivery.webhookId)) out.push(c);
        else if (deps.held(c.delivery.webhookId) === 0) endpoints.add(c.delivery.webhookId);
      }
      const heads = await Promise.all(
        [...endpoints].map(async (id) => [id, await deps.deliveries.head(id)] as const),
      );
      const t = now.getTime();
      for (const [id, head] of heads) {
        if (!head) continue;
        if (head.scheduledAt.getTime() <= t) out.push({ delivery: head, head: true });
        else {
          const until = Math.min(head.scheduledAt.getTime(), t + options.recheckMs);
          blockedUntil.set(id, until);
          wakeAt(until, t);
        }
      }
      return out;
    },

    stop(): void {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
    },

    start(): void {
      stopped = false;
    },
  };
}

export type FifoHeads = ReturnType<typeof fifoHeads>;
