import type { OperationalNotice } from "../../domain/operational.ts";
import type { AttemptResult } from "../ports/deliveries.ts";
import { type StoreFailure, storeFailureOf } from "../ports/store.ts";

/** A result waiting to be written, with what it owes and how it fared so far. */
export interface Entry {
  result: AttemptResult;
  /** delivery.exhausted this result owes (ADR 20), published before the result is written. */
  notice: OperationalNotice | null;
  /** When it was added (the clock's ms): how long recording is behind. */
  since: number;
  /** Writes that failed with this result alone in them. */
  failures: number;
}

/** How far behind recording is: what /readyz and /metrics report (recording-readiness.ts). */
export interface RecordingBacklog {
  /** Results sent and not recorded yet. */
  waiting: number;
  /** How long the oldest of them has waited, in ms; 0 when none waits. */
  oldestMs: number;
  /** How long writes have failed for the store as a whole (lost, timing out, busy), in ms; null while they do not. */
  stalledMs: number | null;
  /** The last failure's kind, until a write succeeds. */
  failure: StoreFailure["kind"] | null;
  /** Failed writes since the start, by kind of failure (a split write counts each part that failed). */
  failures: Readonly<Record<string, number>>;
  /** Results given up since the start (their deliveries handed back), by kind of failure. */
  handedBack: Readonly<Record<string, number>>;
}

/** What a failure says about the next write: wait for the store, or try smaller. */
export const storeWide = (f: StoreFailure) => f.kind === "unreachable";
/** Failures that say the store as a whole is struggling now (not one result): the engine takes no new work. */
export const stalling = (f: StoreFailure) =>
  f.kind === "unreachable" || f.kind === "timeout" || f.kind === "busy";

export interface WriteSteps {
  /** One write attempt of these entries: what they owe, then the results. */
  write(entries: readonly Entry[]): Promise<void>;
  written(entries: readonly Entry[]): void;
  failed(failure: StoreFailure, entries: readonly Entry[]): void;
  /** A result that failed alone `giveUpAfter` times: reported and handed back (record.ts). */
  giveUp(entry: Entry, failure: StoreFailure): Promise<void>;
  giveUpAfter: number;
}

/**
 * Writes entries, splitting a failed write in halves down to single results, so that one result the
 * server refuses, or a write too large or too slow for it, holds back nothing else (issue 31). Answers
 * what is left to try later: everything not written when the store was lost (nothing smaller would
 * pass), and single results that failed on their own fewer than `giveUpAfter` times.
 */
export async function writeSplitting(
  entries: readonly Entry[],
  steps: WriteSteps,
): Promise<{ later: Entry[]; lost: boolean }> {
  try {
    await steps.write(entries);
    steps.written(entries);
    return { later: [], lost: false };
  } catch (e) {
    const failure = storeFailureOf(e);
    steps.failed(failure, entries);
    if (storeWide(failure)) return { later: [...entries], lost: true };
    if (entries.length > 1) {
      const half = Math.ceil(entries.length / 2);
      const first = await writeSplitting(entries.slice(0, half), steps);
      if (first.lost) return { later: [...first.later, ...entries.slice(half)], lost: true };
      const second = await writeSplitting(entries.slice(half), steps);
      return { later: [...first.later, ...second.later], lost: second.lost };
    }
    const entry = entries[0]!;
    entry.failures++;
    if (entry.failures < steps.giveUpAfter) return { later: [entry], lost: false };
    await steps.giveUp(entry, failure);
    return { later: [], lost: false };
  }
}
