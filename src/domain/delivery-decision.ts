import { nextRetryDelay } from "./backoff.ts";
import type { Delivery, SendOutcome } from "./delivery.ts";

/** What is known once an attempt has an outcome. */
export interface AttemptFacts {
  delivery: Pick<Delivery, "attempt" | "trigger">;
  outcome: Pick<SendOutcome, "ok" | "responseStatus" | "retryAfterMs">;
  /** Delays after each failed automatic attempt (HERALD_RETRY_SCHEDULE); its length is the number of retries. */
  retryScheduleMs: readonly number[];
  /** A uniform random number in [0, 1), for the jitter. */
  random: number;
  now: Date;
}

/**
 * What follows an attempt. `streak` is the endpoint's failure streak: a success ends it, a failure
 * starts it (if none is running).
 */
export type Decision =
  | { status: "succeeded"; streak: "end"; retryAt: null; disable: null }
  | { status: "failed"; streak: "start"; retryAt: Date; disable: null }
  | { status: "failed"; streak: "start"; retryAt: null; disable: "gone" | null };

/**
 * The one place that decides what happens after an attempt: a 2xx succeeded; a 410 Gone disables the
 * endpoint at once and is never retried; a failed automatic attempt is tried again after the schedule's
 * delay for it (±20% jitter, lengthened by a Retry-After, never beyond 24 h) until the schedule is used
 * up; a manual attempt is never retried.
 */
export function decideAfterAttempt(f: AttemptFacts): Decision {
  if (f.outcome.ok) return { status: "succeeded", streak: "end", retryAt: null, disable: null };
  if (f.outcome.responseStatus === 410)
    return { status: "failed", streak: "start", retryAt: null, disable: "gone" };
  if (f.delivery.trigger !== "automatic") {
    return { status: "failed", streak: "start", retryAt: null, disable: null };
  }
  const delay = nextRetryDelay({
    failedAttempt: f.delivery.attempt,
    scheduleMs: f.retryScheduleMs,
    random: f.random,
    retryAfterMs: f.outcome.retryAfterMs,
  });
  if (delay === null) return { status: "failed", streak: "start", retryAt: null, disable: null };
  return { status: "failed", streak: "start", retryAt: new Date(f.now.getTime() + delay), disable: null };
}
