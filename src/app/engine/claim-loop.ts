import type { Logger } from "../logger.ts";

export interface ClaimLoopDeps {
  /** One claim: read if needed, take what fits, start it. Answers whether another claim now could take more. */
  claimOnce(): Promise<boolean>;
  /** Whether the engine may take new work now (room in flight, and whatever else composes it). */
  mayTake(): boolean;
  /** Whether the next claim would read the database (see read-demand.ts `pending`). */
  reads(): boolean;
  /** A claim round ended: the engine may be idle now. */
  settled(): void;
  logger: Logger;
  /** Monotonic ms; performance.now() when absent. */
  now?: () => number;
}

export interface ClaimLoopOptions {
  /** After completions, how long to gather freed slots before claiming again. */
  claimDelayMs: number;
}

/**
 * The claim loop's timing and wake-ups: whether the engine runs, the one claim round that may be on
 * its way (a wake during it asks for another round after it), and the next claim that is due soon.
 *
 * Completions free slots one by one, and publishes bring work one event at a time; a claim after each
 * would make about one read per delivery. Wake-ups are gathered instead: the next claim starts no
 * sooner than twice what the last read took (at least claimDelayMs) after it ended, so reads take at
 * most about a third of the time and each claim fills what freed up meanwhile. On a database that
 * answers in a millisecond that is a millisecond or two; where reads are slow (FerretDB v1 reads every
 * pending record of a due query) it keeps reads from running back to back. A claim that will not read
 * is served from the queue and is not spaced by the reads' time.
 */
export function claimLoop(deps: ClaimLoopDeps, options: ClaimLoopOptions) {
  const now = deps.now ?? (() => performance.now());
  let running = false;
  let pumping = false;
  let again = false;
  let pumpDone: Promise<void> = Promise.resolve();
  /** Cancels the claim that is due at soonAt; null when none is. */
  let cancelSoon: (() => void) | null = null;
  let soonAt = 0;
  /** How long the last claim read took, and when it ended (ms, monotonic). */
  let lastReadMs = 0;
  let lastReadEnd = 0;

  async function pump(): Promise<void> {
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    let pumped!: () => void;
    pumpDone = new Promise<void>((resolve) => {
      pumped = resolve;
    });
    try {
      do {
        again = false;
        while (running && deps.mayTake()) {
          if (!(await deps.claimOnce())) break;
        }
      } while (again && running);
    } catch (e) {
      deps.logger.warn("claiming due deliveries failed; the schedule will try again", { error: e as Error });
    } finally {
      pumping = false;
      pumped();
      deps.settled();
    }
  }

  return {
    get running(): boolean {
      return running;
    },
    /** Whether a claim round is on its way. */
    get pumping(): boolean {
      return pumping;
    },
    /** How long the last claim read took (ms). */
    get lastReadMs(): number {
      return lastReadMs;
    },
    start(): void {
      running = true;
    },
    /** Claims now (a round already on its way runs once more). */
    now(): void {
      if (running) void pump();
    },
    /** Claims now unless a round is on its way. */
    kick(): void {
      if (running && !pumping) void pump();
    },
    /**
     * Claims soon. A publish's hand-over (`handedOver`) goes once the I/O already waiting is handled;
     * freed slots are gathered for claimDelayMs; a claim that reads waits for the reads' spacing. A
     * claim already due sooner serves this wake too; one due later is brought forward.
     */
    soon(handedOver = false): void {
      if (!running) return;
      // Waiting out a slow read (a three-process due read of 15 ms made hand-overs wait 30 ms) would only
      // delay sends whose work is already queued.
      const wait = deps.reads()
        ? Math.max(options.claimDelayMs, lastReadEnd + 2 * lastReadMs - now())
        : handedOver
          ? 0
          : options.claimDelayMs;
      const at = now() + wait;
      if (cancelSoon) {
        if (soonAt <= at) return;
        cancelSoon();
      }
      soonAt = at;
      const claim = () => {
        cancelSoon = null;
        if (running) void pump();
      };
      // Not a timer of 0: timers fire a millisecond later at best, a millisecond added to every first attempt.
      if (wait <= 0 && typeof setImmediate === "function") {
        const next = setImmediate(claim);
        cancelSoon = () => clearImmediate(next);
      } else {
        const timer = setTimeout(claim, wait);
        cancelSoon = () => clearTimeout(timer);
      }
    },
    /** A claim read ran from `started` to `ended` (monotonic ms): the next reads are spaced by it. */
    measured(started: number, ended: number): void {
      lastReadEnd = ended;
      lastReadMs = ended - started;
    },
    /** Stops claiming; resolves once the round on its way (if any) has landed. */
    stop(): Promise<void> {
      running = false;
      cancelSoon?.();
      cancelSoon = null;
      return pumpDone;
    },
  };
}

export type ClaimLoop = ReturnType<typeof claimLoop>;
