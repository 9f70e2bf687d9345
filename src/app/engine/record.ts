import type { Endpoint } from "../../domain/endpoint.ts";
import type { OperationalNotice } from "../../domain/operational.ts";
import type { Logger } from "../logger.ts";
import type { AttemptResult } from "../ports/deliveries.ts";
import type { Repositories, StoreFailure } from "../ports/store.ts";
import type { Clock } from "../ports/system.ts";
import { AcknowledgedPairs } from "./acknowledged.ts";
import { recordDelay } from "./record-delay.ts";
import { type Entry, type RecordingBacklog, stalling, writeSplitting } from "./record-write.ts";

export type { RecordingBacklog } from "./record-write.ts";

export interface RecorderOptions {
  /** Results are written together once this many are waiting, or after a wait (record-delay.ts); never more at once. */
  size: number;
  delayMs: number;
  batchMs?: number;
  batchRows?: number;
  /** The share of the shards this process owns (0–1): a small share's results wait longer (record-delay.ts). */
  share?: () => number;
  /** After a failed write, how long before what it held is tried again. */
  retryMs: number;
  /** A result that failed on its own this many times is handed back (default 3). */
  giveUpAfter?: number;
  /** How long a handed-back delivery waits before it is claimed again (default 60 s). */
  handBackMs?: number;
  /** Results waiting (or being written) from which the engine takes no new work (default 5 × size). */
  maxWaiting?: number;
}

/**
 * Stage 6, record: gathers results and writes them in batches of at most `size` (the follow-up attempts'
 * insert, then the results' update), plus the endpoints' failure-streak changes. `recorded` is told which
 * deliveries are written (or handed back), so the engine stops holding them. If the process dies first,
 * the records are still pending and the shard's next owner sends them again.
 *
 * A failed batch is tried again split in halves, down to single results (record-write.ts); a result that
 * fails alone `giveUpAfter` times is reported (its delivery id in the log, a metric) and handed back: its
 * record stays pending, moved `handBackMs` on, and is sent again then. It was most likely sent already:
 * delivery is at least once, and losing it is not allowed. While writes fail for the store as a whole,
 * or too many results wait, `accepting` is false and the engine takes no new work; `resumed` says when
 * it may again (issue 31, docs/adr/0010-database-outages.md).
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
    /** Written (a read started after finds it): a follow-up, or a hand-back not moved on, due at `at` (ms). */
    due?(at: number): void;
    /** Recording may take new work again (see `accepting`). */
    resumed?(): void;
    /**
     * Publishes the operational events these results owe (ADR 20: delivery.exhausted, endpoint.recovered)
     * before the results are written: after a crash in between, the attempts are sent again and owe the
     * same events, which their keys make one. A failure is retried with the results.
     */
    announce?(
      exhausted: readonly OperationalNotice[],
      streaksEnded: readonly string[],
    ): Promise<readonly Endpoint[]>;
    /** Once the ended streaks are cleared: endpoint.recovered of those `announce` read unreported and the
     *  reporting job reported before the clear. A failure is logged; the streak is over either way. */
    cleared?(unreported: readonly Endpoint[]): Promise<void>;
  },
  options: RecorderOptions,
) {
  const { repos, logger, clock } = deps;
  const giveUpAfter = options.giveUpAfter ?? 3;
  const handBackMs = options.handBackMs ?? 60_000;
  const maxWaiting = options.maxWaiting ?? 5 * options.size;
  let waiting: Entry[] = [];
  const wait = recordDelay(options);
  let writingNow: readonly Entry[] = []; // the batch being written now
  const streakEnded = new Set<string>();
  const streakStarted = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let writing: Promise<void> = Promise.resolve();
  let stalledSince: number | null = null;
  let lastFailure: StoreFailure["kind"] | null = null;
  let wasAccepting = true;
  const failures: Record<string, number> = {};
  const handedBack: Record<string, number> = {};
  const acknowledged = new AcknowledgedPairs();
  const withoutFollowUp = (r: AttemptResult): AttemptResult =>
    r.next && acknowledged.has(r.next.eventId, r.next.webhookId)
      ? { ...r, next: null, nextAttemptAt: null, acknowledgedInFlight: true }
      : r;
  const now = () => clock.now().getTime();
  const behind = () => waiting.length + writingNow.length;
  // A stall holds new work back only while something waits: with nothing left to write (all written or
  // handed back), new work is what tells whether the store writes again.
  const accepting = () => (stalledSince === null || behind() === 0) && behind() < maxWaiting;

  /** Tells the engine once it may take work again. */
  function checkResumed() {
    const ok = accepting();
    if (ok && !wasAccepting) deps.resumed?.();
    wasAccepting = ok;
  }

  let timerAt = 0;
  /** Writes in `ms`, or sooner if a write is already set for sooner. */
  function schedule(ms: number) {
    const at = performance.now() + ms;
    if (timer && timerAt <= at) return;
    clearTimeout(timer ?? undefined);
    [timerAt, timer] = [at, setTimeout(() => void flush(), ms)];
  }

  /** Reports a result that keeps failing alone and hands its delivery back, then counts it (see above). */
  async function giveUp(entry: Entry, failure: StoreFailure) {
    const { id } = entry.result;
    logger.error("a delivery result could not be recorded; its delivery is handed back to be sent again", {
      delivery_id: id,
      status: entry.result.status,
      failure: failure.kind,
      answer: failure.answer,
      tries: entry.failures,
    });
    // Moved on, so it is not claimed and sent again at once (its result would likely fail the same way),
    // and found by the reads as it comes due; not moved, it is due now: read for it.
    await repos.deliveries.postpone([id], new Date(now() + handBackMs)).catch((e: unknown) => {
      logger.warn("postponing a handed-back delivery failed; it is sent again when next claimed", {
        delivery_id: id,
        error: e as Error,
      });
      deps.due?.(now());
    });
    handedBack[failure.kind] = (handedBack[failure.kind] ?? 0) + 1;
    deps.recorded([id]);
  }

  async function cycle() {
    const ended = [...streakEnded];
    const started = [...streakStarted];
    streakEnded.clear();
    streakStarted.clear();
    if (waiting.length === 0 && ended.length === 0 && started.length === 0) return;
    let unreported: readonly Endpoint[] = [];
    let announced = ended.length === 0 || !deps.announce;
    const announce = async (notices: readonly OperationalNotice[]) => {
      const endedNow = announced ? [] : ended;
      if (!deps.announce || (notices.length === 0 && endedNow.length === 0)) return;
      const u = await deps.announce(notices, endedNow);
      if (!announced) [unreported, announced] = [u, true];
    };
    const later: Entry[] = [];
    let lost = false;
    const steps = {
      giveUpAfter,
      giveUp,
      async write(entries: readonly Entry[]) {
        await announce(entries.flatMap((e) => (e.notice ? [e.notice] : [])));
        await repos.deliveries.record(entries.map((e) => e.result));
      },
      written(entries: readonly Entry[]) {
        stalledSince = null;
        lastFailure = null;
        deps.recorded(entries.map((e) => e.result.id));
        const next = entries.flatMap((e) => (e.result.next ? [e.result.next.scheduledAt.getTime()] : []));
        if (next.length > 0) deps.due?.(Math.min(...next));
      },
      failed(failure: StoreFailure, entries: readonly Entry[]) {
        lastFailure = failure.kind;
        if (stalling(failure)) stalledSince ??= now();
        failures[failure.kind] = (failures[failure.kind] ?? 0) + 1;
        logger.warn("recording delivery results failed; trying again", {
          failure: failure.kind,
          answer: failure.answer,
          count: entries.length,
        });
      },
    };
    while (waiting.length > 0 && !lost) {
      writingNow = waiting.splice(0, options.size);
      const r = await writeSplitting(writingNow, steps);
      writingNow = [];
      later.push(...r.later);
      lost = r.lost;
      checkResumed();
    }
    if (!announced && !lost) {
      await announce([]).catch((e: unknown) => {
        logger.warn("announcing ended failure streaks failed; trying again", { error: e as Error });
      });
    }
    waiting = [...later, ...waiting];
    if (later.length > 0) schedule(options.retryMs);
    if (waiting.length === 0) stalledSince = null;
    if (lost || !announced) {
      // Tried again with the next write; a streak changed meanwhile keeps its newer state.
      for (const id of ended) if (!streakStarted.has(id)) streakEnded.add(id);
      for (const id of started) if (!streakEnded.has(id)) streakStarted.add(id);
      schedule(options.retryMs);
      checkResumed();
      return;
    }
    checkResumed();
    try {
      if (ended.length) await repos.endpoints.markSucceeded(ended);
      if (started.length) await repos.endpoints.markFailing(started, clock.now());
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
  }

  /** A write is chained and not started yet: it takes whatever arrives until it starts. */
  let queued = false;

  function flush(): Promise<void> {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    if (queued) return writing;
    queued = true;
    writing = writing
      .then(() => {
        queued = false;
        return cycle();
      })
      .catch((e: unknown) => {
        logger.error("recording delivery results crashed; trying again", { error: e as Error });
        schedule(options.retryMs);
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
      soon = false,
    ) {
      wait.arrived(performance.now());
      if (result.acknowledges) {
        acknowledged.add(result.acknowledges.eventId, result.acknowledges.webhookId);
        for (const e of waiting) e.result = withoutFollowUp(e.result);
      }
      const given = effects?.exhausted;
      // A pair a manual success acknowledged meanwhile was delivered after all: nothing was given up.
      const notice = given && !acknowledged.has(String(given.data.event_id), given.endpointId) ? given : null;
      waiting.push({ result: withoutFollowUp(result), notice, since: now(), failures: 0 });
      if (effects?.streak === "end") {
        streakStarted.delete(effects.endpointId);
        streakEnded.add(effects.endpointId);
      } else if (effects?.streak === "start") {
        streakEnded.delete(effects.endpointId);
        streakStarted.add(effects.endpointId);
      }
      wasAccepting = wasAccepting && accepting();
      // While the store fails as a whole, only the retry's timer writes: each write now would fail too.
      if (stalledSince !== null) schedule(options.retryMs);
      else if (waiting.length >= options.size) void flush();
      else schedule(soon ? options.delayMs : wait.delayMs());
    },
    /** Writes what is waiting now; resolves when every write so far has settled. */
    flush,
    get waiting() {
      return waiting.length;
    },
    /** Whether the engine may take new work: recording keeps up (see RecorderOptions.maxWaiting). */
    get accepting() {
      return accepting();
    },
    backlog(): RecordingBacklog {
      let oldest = Number.POSITIVE_INFINITY;
      for (const e of waiting) oldest = Math.min(oldest, e.since);
      for (const e of writingNow) oldest = Math.min(oldest, e.since);
      const t = now();
      return {
        waiting: waiting.length + writingNow.length,
        oldestMs: Number.isFinite(oldest) ? Math.max(0, t - oldest) : 0,
        stalledMs: stalledSince === null ? null : Math.max(0, t - stalledSince),
        failure: lastFailure,
        failures: { ...failures },
        handedBack: { ...handedBack },
      };
    },
  };
}
