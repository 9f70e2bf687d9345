import type { Endpoint } from "../../domain/endpoint.ts";
import type { OperationalNotice } from "../../domain/operational.ts";
import type { Logger } from "../logger.ts";
import type { AttemptResult } from "../ports/deliveries.ts";
import type { Repositories } from "../ports/store.ts";
import type { Clock } from "../ports/system.ts";

/** How many acknowledged pairs the recorder remembers: far more than can be in flight at once. */
const ACKNOWLEDGED_KEPT = 10_000;

export interface RecorderOptions {
  /** Results are written together once this many are waiting, or after `delayMs`. */
  size: number;
  delayMs: number;
  /** After a failed write, how long before the same results are tried again. */
  retryMs: number;
}

/**
 * Stage 6, record: gathers results and writes them in two batched operations (the follow-up attempts'
 * insert, then the results' update), plus the endpoints' failure-streak changes. `recorded` is told
 * which deliveries are written, so the engine stops holding them. A failed write is tried again; if the
 * process dies first, the records are still pending and the shard's next owner sends them again.
 *
 * A pair acknowledged by a manual success (ADR 19) gets no further automatic attempt: the store cancels
 * what is pending of it, and a result of that pair recorded here later (an attempt that was in flight
 * then) is written without its follow-up, which would otherwise send the event again.
 */
export function recorder(
  deps: {
    repos: Repositories;
    clock: Clock;
    logger: Logger;
    recorded(ids: readonly string[]): void;
    /**
     * Publishes the operational events these results owe (ADR 20): delivery.exhausted of given-up events,
     * endpoint.recovered of reported streaks among those ended. Called before the results are written, so
     * a crash in between leaves the attempts pending: they are sent again and owe the same events, which
     * the events' keys make one. A failure is retried with the results.
     */
    announce?(
      exhausted: readonly OperationalNotice[],
      streaksEnded: readonly string[],
    ): Promise<readonly Endpoint[]>;
    /**
     * Once the ended streaks are cleared: endpoint.recovered of those `announce` read unreported and the
     * reporting job reported before the clear. A failure is logged; the streak is over either way.
     */
    cleared?(unreported: readonly Endpoint[]): Promise<void>;
  },
  options: RecorderOptions,
) {
  const { repos, logger } = deps;
  let waiting: AttemptResult[] = [];
  let exhausted: OperationalNotice[] = [];
  const streakEnded = new Set<string>();
  const streakStarted = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let writing: Promise<void> = Promise.resolve();
  /** Pairs acknowledged through this recorder, oldest first; only manual successes enter, so it stays small. */
  const acknowledged = new Set<string>();
  const pairKey = (eventId: string, webhookId: string) => `${eventId}/${webhookId}`;
  const withoutFollowUp = (r: AttemptResult): AttemptResult =>
    r.next && acknowledged.has(pairKey(r.next.eventId, r.next.webhookId))
      ? { ...r, next: null, nextAttemptAt: null, acknowledgedInFlight: true }
      : r;

  function schedule(ms: number) {
    if (!timer) timer = setTimeout(() => void flush(), ms);
  }

  function flush(): Promise<void> {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    writing = writing.then(async () => {
      const results = waiting;
      const notices = exhausted;
      waiting = [];
      exhausted = [];
      const ended = [...streakEnded];
      const started = [...streakStarted];
      streakEnded.clear();
      streakStarted.clear();
      if (results.length === 0 && ended.length === 0 && started.length === 0) return;
      let unreported: readonly Endpoint[] = [];
      try {
        if (deps.announce && (notices.length > 0 || ended.length > 0)) {
          unreported = await deps.announce(notices, ended);
        }
        await repos.deliveries.record(results);
      } catch (e) {
        logger.error("recording delivery results failed; trying again", {
          error: e as Error,
          count: results.length,
        });
        waiting = [...results, ...waiting];
        exhausted = [...notices, ...exhausted];
        for (const id of ended) streakEnded.add(id);
        for (const id of started) streakStarted.add(id);
        schedule(options.retryMs);
        return;
      }
      deps.recorded(results.map((r) => r.id));
      try {
        if (ended.length) await repos.endpoints.markSucceeded(ended);
        if (started.length) await repos.endpoints.markFailing(started, deps.clock.now());
      } catch (e) {
        // The next attempt's outcome sets the streak again; the maintenance job only reads it.
        logger.warn("recording endpoint health failed", { error: e as Error });
        return;
      }
      if (unreported.length > 0 && deps.cleared) {
        await deps
          .cleared(unreported)
          .catch((e: unknown) =>
            logger.warn("publishing endpoint.recovered after a streak's clear failed", { error: e as Error }),
          );
      }
    });
    return writing;
  }

  return {
    add(
      result: AttemptResult,
      effects: {
        endpointId: string;
        streak: "end" | "start" | null;
        exhausted?: OperationalNotice | null;
      } | null = null,
    ) {
      if (result.acknowledges) {
        acknowledged.add(pairKey(result.acknowledges.eventId, result.acknowledges.webhookId));
        if (acknowledged.size > ACKNOWLEDGED_KEPT) {
          for (const oldest of acknowledged) {
            acknowledged.delete(oldest);
            break;
          }
        }
        waiting = waiting.map(withoutFollowUp);
      }
      waiting.push(withoutFollowUp(result));
      const given = effects?.exhausted;
      // A pair a manual success acknowledged meanwhile was delivered after all: nothing was given up.
      if (given && !acknowledged.has(pairKey(String(given.data.event_id), given.endpointId)))
        exhausted.push(given);
      if (effects?.streak === "end") {
        streakStarted.delete(effects.endpointId);
        streakEnded.add(effects.endpointId);
      } else if (effects?.streak === "start") {
        streakEnded.delete(effects.endpointId);
        streakStarted.add(effects.endpointId);
      }
      if (waiting.length >= options.size) void flush();
      else schedule(options.delayMs);
    },
    /** Writes what is waiting now; resolves when every write so far has settled. */
    flush,
    get waiting() {
      return waiting.length;
    },
  };
}
