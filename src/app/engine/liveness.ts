import type { Logger } from "../logger.ts";
import type { Liveness, ShardRepository } from "../ports/shards.ts";
import type { Clock } from "../ports/system.ts";

/** How this process proves it is alive, per kind of store (ADR 25). */
export interface LivenessTiming {
  /** How often the proof is renewed (0: no proof of its own; the lease renewals carry the heartbeat). */
  everyMs: number;
  /** How long after a proof began this process may still start sends without a newer one. */
  validMs: number;
  /** ("heartbeat") How long a heartbeat lasts. */
  expiresMs: number;
  /**
   * How long a taker waits, after it read an owner dead, before it starts sends in that owner's shards:
   * the owner may have started sends until `validMs` after its last proof, which began before its death
   * was readable.
   */
  takeoverWaitMs: number;
}

/**
 * Where another read proves this process alive too (the ownership round on PostgreSQL, `proven`), the
 * check's timer ticks twice per `everyMs` and a check runs when the last proof from elsewhere is at least
 * this fraction of `everyMs` old, or else every second tick: with a round a second the two take turns
 * (a check between two rounds), and proofs stay at most `everyMs` × (this + ½) apart, within `validMs`.
 */
const CHECK_AFTER = 0.9;

/** Pauses and clock skew up to this cannot make a suspected process and its taker both start sends. */
const SAFETY_MS = 1_000;

export function livenessTiming(kind: Liveness): LivenessTiming {
  switch (kind) {
    case "session":
      // The lock is checked twice a second; a taker waits out what the dead owner may still have started.
      return { everyMs: 500, validMs: 1_500, expiresMs: 0, takeoverWaitMs: 1_500 + 500 };
    case "heartbeat":
      // A heartbeat of 6 s, renewed every second; sends stop 2 s before it can expire, so by the time anyone
      // reads it expired (skew up to SAFETY_MS) its owner has stopped starting sends: no wait.
      return { everyMs: 1_000, validMs: 4_000, expiresMs: 6_000, takeoverWaitMs: 0 };
    default:
      return { everyMs: 0, validMs: Number.POSITIVE_INFINITY, expiresMs: 0, takeoverWaitMs: 0 };
  }
}

export interface ProcessLivenessDeps {
  shards: Pick<ShardRepository, "liveness" | "hold" | "beat">;
  clock: Clock;
  logger: Logger;
  processId: string;
  /**
   * The proof was broken (others may have read this process dead and taken its shards): every shard is
   * to be counted lost at once, before sends start again under a new proof.
   */
  lost(): void;
  /**
   * A proof held after the last one had run out (a slow or failed proof): sends may start again. What
   * the engine let go meanwhile is read again only if it is told (nothing else would wake it).
   */
  regained?(): void;
  monotonic?: () => number;
}

/**
 * This process's proof of life (ADR 25): the session lock kept on PostgreSQL, the short heartbeat on
 * MongoDB. While it is not proven recently (`valid`), no send starts: a process cut from its proof may
 * be suspected already. A break that others could have seen (the lock's session ended; a heartbeat
 * renewed too late) counts every shard lost (`lost`).
 */
export function processLiveness(deps: ProcessLivenessDeps, timing: LivenessTiming) {
  const monotonic = deps.monotonic ?? (() => performance.now());
  const kind = deps.shards.liveness;
  let validUntil = timing.everyMs === 0 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  /** When the last proof that held began (monotonic). */
  let lastOk = Number.NEGATIVE_INFINITY;
  /** When the last check of its own began (monotonic). */
  let lastCheck = Number.NEGATIVE_INFINITY;
  let ticksSinceCheck = 0;
  let timer: ReturnType<typeof setInterval> | null = null;
  let proving: Promise<void> | null = null;
  let stopped = false;
  let failing = false;

  async function prove(): Promise<void> {
    const started = monotonic();
    lastCheck = started;
    ticksSinceCheck = 0;
    let unbroken: boolean;
    if (kind === "session") unbroken = await deps.shards.hold(deps.processId);
    else {
      await deps.shards.beat(deps.processId, new Date(deps.clock.now().getTime() + timing.expiresMs));
      // Written before the previous heartbeat could be read expired (less the skew allowed for)?
      unbroken = monotonic() < lastOk + timing.expiresMs - SAFETY_MS;
    }
    if (stopped) return;
    if (!unbroken) {
      if (lastOk > Number.NEGATIVE_INFINITY)
        deps.logger.warn(
          "this process's proof of life was broken; its shards count as lost and are taken again",
        );
      validUntil = Number.NEGATIVE_INFINITY;
      deps.lost();
    }
    if (failing) deps.logger.info("this process's proof of life holds again");
    failing = false;
    // A round's proof (`proven`) may have begun later, while this check was on its way.
    held(started, !unbroken);
  }

  /**
   * A proof that began at `started` held: valid from then for validMs (`afresh` after a break: from then
   * alone). Says `regained` when validity had run out and is back.
   */
  function held(started: number, afresh: boolean): void {
    const lapsed = lastOk > Number.NEGATIVE_INFINITY && monotonic() >= validUntil;
    lastOk = afresh ? started : Math.max(lastOk, started);
    validUntil = afresh ? started + timing.validMs : Math.max(validUntil, started + timing.validMs);
    if (lapsed && monotonic() < validUntil) deps.regained?.();
  }

  function run(): Promise<void> {
    if (stopped || proving) return proving ?? Promise.resolve();
    proving = prove()
      .catch((e) => {
        if (!failing && !stopped)
          deps.logger.warn("proving this process alive failed; no sends start until it holds", {
            error: e as Error,
          });
        failing = true;
      })
      .finally(() => {
        proving = null;
      });
    return proving;
  }

  return {
    /** Resolves once the first proof was tried. */
    start(): Promise<void> {
      stopped = false;
      if (timing.everyMs === 0) return Promise.resolve();
      const shared = kind === "session";
      const due = () => {
        if (!shared) return true;
        ticksSinceCheck++;
        // A proof from the round since the last check stands in for a check while it is recent.
        if (lastOk > lastCheck) return monotonic() - lastOk >= timing.everyMs * CHECK_AFTER;
        return ticksSinceCheck >= 2;
      };
      timer = setInterval(
        () => {
          if (due()) void run();
        },
        shared ? timing.everyMs / 2 : timing.everyMs,
      );
      (timer as { unref?: () => void }).unref?.();
      return run();
    },
    /**
     * ("session") Another read that began at `started` (monotonic) saw this process's proof of life
     * held by the session that took it: as good as a check that answered unbroken. Ignored before the
     * first check has held (a take must be the check's: it tells a break).
     */
    proven(started: number): void {
      if (stopped || lastOk === Number.NEGATIVE_INFINITY || started <= lastOk) return;
      held(started, false);
    },
    /** Whether this process may start sends now, as far as its proof of life goes. */
    valid(): boolean {
      return monotonic() < validUntil;
    },
    /** Until when (monotonic) it is valid, for caches of what may be claimed. */
    get validUntil(): number {
      return validUntil;
    },
    stop(): void {
      stopped = true;
      validUntil = Number.NEGATIVE_INFINITY;
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}

export type ProcessLiveness = ReturnType<typeof processLiveness>;
