import { StoreUnavailableError } from "../app/ports/store.ts";

/** How long a store call waits before it asks whether the database answers at all. */
export const STALL_MS = 300;
/** How long that question (a trivial command: `SELECT 1`, a ping) may take before the answer is "no". */
export const PROBE_DEADLINE_MS = 600;

export interface StallWatchOptions {
  /** Resolves when the database answers a trivial statement within `deadlineMs`, rejects otherwise. */
  probe(deadlineMs: number): Promise<void>;
  stallMs?: number;
  probeDeadlineMs?: number;
  now?: () => number;
  /** Told of every call's and probe's outcome: null when it succeeded, else its error. */
  onOutcome?: (error: unknown) => void;
  /**
   * Told once per probe that said "no", before the calls waiting on it are answered: the place to drop
   * what those calls left queued in the driver, so that it cannot run after they were answered 503.
   */
  onUnanswered?: () => void;
}

/**
 * Answers a store call that waits on a database that has stopped answering, instead of letting it wait
 * (docs/adr/0010-database-outages.md). A driver gives a call no deadline of its own while it waits for a
 * connection: postgres.js's call queued behind one on a silent connection, or riding a connection that
 * keeps reconnecting to a proxy whose database is gone, waits as long as the outage (and a publish with
 * it); the MongoDB driver's waits up to its wait-queue timeout (10 s) for a pool whose connections are
 * all held. Once a call has waited `stallMs`, and nothing has succeeded for as long, one probe asks the
 * database for a trivial answer; if that fails or takes longer than `probeDeadlineMs`, every such call is
 * answered StoreUnavailableError (503, try again) at once. A call that is only slow is never given up
 * while the database answers: other calls' successes, or the probe, say so, and it keeps waiting (its
 * bound is the store's own: statement_timeout, the socket timeout). A given-up call may still complete
 * later, as one cut by a reset may have: callers treat 503 as "not known to be done", which is what a
 * retry with its Idempotency-Key is for.
 */
export function stallWatch(options: StallWatchOptions) {
  const stallMs = options.stallMs ?? STALL_MS;
  const probeDeadlineMs = options.probeDeadlineMs ?? PROBE_DEADLINE_MS;
  const now = options.now ?? (() => Date.now());
  let lastSuccess = Number.NEGATIVE_INFINITY;
  let probing: Promise<boolean> | null = null;

  /** Whether the database answers: one probe at a time, shared by every call that asks meanwhile. */
  const answers = (): Promise<boolean> => {
    if (!probing) {
      const startedAt = now();
      const answer = options.probe(probeDeadlineMs).then(
        () => {
          lastSuccess = Math.max(lastSuccess, now());
          options.onOutcome?.(null);
          return true;
        },
        (e: unknown) => {
          // A probe that began before the database came back may fail after another call got an answer:
          // the database answers, and what waits on it now is about to be answered too.
          if (lastSuccess >= startedAt) return true;
          options.onOutcome?.(e);
          options.onUnanswered?.();
          return false;
        },
      );
      probing = answer;
      void answer.finally(() => {
        probing = null;
      });
    }
    return probing;
  };

  return {
    /** Runs `call`; rejects with StoreUnavailableError if it waits on a database that answers nothing. */
    run<T>(call: () => Promise<T>): Promise<T> {
      const started = now();
      return new Promise<T>((resolve, reject) => {
        let settled = false;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const check = async () => {
          if (settled) return;
          if (now() - lastSuccess >= stallMs && !(await answers())) {
            if (settled) return;
            settled = true;
            const waited = now() - started;
            const e = new StoreUnavailableError(
              `the database answered nothing for ${waited} ms: gave up waiting`,
            );
            options.onOutcome?.(e);
            reject(e);
            return;
          }
          // Asked again once nothing has succeeded for stallMs: counted from the last success, so a call
          // that began just after one is not kept waiting a whole further stallMs.
          if (!settled) arm(Math.max(1, lastSuccess + stallMs - now()));
        };
        const arm = (ms: number) => {
          timer = setTimeout(() => void check(), ms);
          (timer as { unref?: () => void }).unref?.();
        };
        arm(stallMs);
        // Started at once, as without the watch: a caller may count on what the call does synchronously.
        let running: Promise<T>;
        try {
          running = call();
        } catch (e) {
          running = Promise.reject(e);
        }
        running.then(
          (value) => {
            lastSuccess = Math.max(lastSuccess, now());
            options.onOutcome?.(null);
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve(value);
          },
          (e: unknown) => {
            options.onOutcome?.(e);
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            reject(e);
          },
        );
      });
    },
    /** Something else (the readiness ping) saw the database answer. */
    noteSuccess(): void {
      lastSuccess = Math.max(lastSuccess, now());
      options.onOutcome?.(null);
    },
  };
}

export type StallWatch = ReturnType<typeof stallWatch>;
