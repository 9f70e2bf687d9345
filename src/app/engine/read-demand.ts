import type { DueSignals, HandedWork } from "../ports/store.ts";
import type { DueQueue } from "./queue.ts";

/**
 * Whether the database may hold due work this process has not read: something was published, a
 * retry's time came (the schedule's wake-up), a shard was gained, the last read's page was full or
 * failed, or queued work grew too old (`all`); or a publish here, or another process's signal, stored
 * work for given endpoints that could not be handed over (`endpoint`, a narrower mark). A claim reads
 * the database only when this says so or a queued endpoint runs low; otherwise it is served from the
 * queue alone.
 */
export function readDemand(queue: Pick<DueQueue, "runningLow" | "isFull" | "markCut">) {
  let fresh = true;
  const freshFor = new Set<string>();
  let unlisten: (() => void) | null = null;

  return {
    /** New work may be anywhere in the owned shards. */
    all(): void {
      fresh = true;
    },
    /** New work was stored for this endpoint. */
    endpoint(webhookId: string): void {
      freshFor.add(webhookId);
    },
    /** Whether a claim starting now would read (without settling anything: the claim loop's spacing asks it). */
    pending(): boolean {
      return fresh || freshFor.size > 0 || queue.runningLow();
    },
    /** Whether a claim should read now; an endpoint whose lane is full enough is read once it runs low. */
    mustRead(): boolean {
      if (fresh || queue.runningLow()) return true;
      for (const id of freshFor) {
        if (!queue.isFull(id)) return true;
        // Enough queued for now: what was just stored is read once the lane runs low.
        queue.markCut(id);
        freshFor.delete(id);
      }
      return false;
    },
    /**
     * Another process stored work for endpoints of shards held here (`mine`): marked like this process's
     * own publishes (read unless that endpoint's lane is full already), and `wake` claims soon rather than
     * at the next scheduled read, until `unlisten`. Work the announcement carried goes to `take` first,
     * which answers the endpoints it left to a read and whether it queued any. `listening`: the channel
     * listens (again), and what was announced before it did may have been lost.
     */
    listen(
      signals: DueSignals | null,
      mine: (webhookId: string) => boolean,
      wake: (taken: boolean) => void,
      take?: (work: HandedWork) => { unread: ReadonlySet<string>; queued: boolean },
      listening?: () => void,
    ): void {
      unlisten =
        signals?.listen((endpointIds, work) => {
          const took = work && take ? take(work) : null;
          const unread = took?.unread ?? null;
          let read = false;
          for (const id of endpointIds) {
            if (!mine(id) || (unread !== null && !unread.has(id))) continue;
            freshFor.add(id);
            read = true;
          }
          // Work taken as it came goes at once, as a publish's own hand-over does; a read waits its spacing.
          if (read || took?.queued) wake(!read);
        }, listening) ?? null;
    },
    unlisten(): void {
      unlisten?.();
      unlisten = null;
    },
    /** A read starts: it sees everything stored so far. */
    reading(): void {
      fresh = false;
      freshFor.clear();
    },
  };
}

export type ReadDemand = ReturnType<typeof readDemand>;
