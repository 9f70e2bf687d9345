export const JITTER = 0.2;
export const MAX_DELAY_MS = 24 * 3_600_000;

export const DEFAULT_RETRY_SCHEDULE_MS = [
  5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000, 57_600_000,
  86_400_000,
];

export interface RetryInput {
  /** The 1-based number of the automatic attempt that just failed. */
  failedAttempt: number;
  /** Delays after each failed automatic attempt; its length is the number of retries. */
  scheduleMs: readonly number[];
  /** A uniform random number in [0, 1). */
  random: number;
  /** A Retry-After the receiver sent with 429 or 503, in milliseconds. */
  retryAfterMs?: number | null;
}

/**
 * The delay before the next automatic attempt, or null when the schedule is exhausted (give up).
 * The schedule's delay gets +/-20% jitter; a Retry-After can only lengthen it, never beyond 24 h.
 */
export function nextRetryDelay(input: RetryInput): number | null {
  const base = input.scheduleMs[input.failedAttempt - 1];
  if (base === undefined) return null;
  const jittered = Math.round(base * (1 - JITTER + 2 * JITTER * input.random));
  const delay = Math.max(jittered, input.retryAfterMs ?? 0);
  return Math.min(delay, MAX_DELAY_MS);
}

/** Parses a Retry-After header (delta seconds or an HTTP date) into milliseconds from now; null when absent or bad. */
export function parseRetryAfter(value: string | null | undefined, now: Date): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Math.min(Number(v) * 1000, MAX_DELAY_MS);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.min(at - now.getTime(), MAX_DELAY_MS));
}
