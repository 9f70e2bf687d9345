/**
 * A tick this long after the last due read reads, whatever the answers said: ticks come every second, so
 * due reads are at most 5 s apart, and a wake-up lost delays work no longer than that (ADR 30).
 */
export const SCHEDULED_READ_CAP_MS = 4_000;

/** What a due read covered, taken as it starts (`reading`). */
export interface ReadStart {
  /** Wall-clock ms, the read's `now`. */
  at: number;
  /** The shards read (null: all). */
  shards: ReadonlySet<number> | null;
  /** Whether announcements of other processes' work were known to get through (see `tick`). */
  live: boolean;
}

/**
 * Whether the schedule's once-a-second tick must read the database (ADR 30, "The scheduled read waits"),
 * or may claim from the queue alone. The tick was the safety net for work nobody announced: a retry
 * coming due, a delivery handed back or postponed, an announcement lost. A due read of a store that can
 * also answers when the earliest pending delivery of its shards after `now` comes due (`next`, within
 * the cap); until then, and while nothing below says otherwise, that net has nothing to catch:
 *
 * - work this process writes for later (a retry's follow-up, a hand-back, a postponed delivery) is
 *   `noted` once written, with its time;
 * - what it lets go unsent, still due, is noted for now;
 * - another process's work reaches it through the due channel, while the channel is `live` (and a
 *   re-listen after a loss wakes a read, engine.ts); a store without a channel answers no `next`;
 * - shards claimable now that the last read did not cover are read at once.
 *
 * Everything else that makes work due (publishes, manual retries, taken shards, released FIFO heads,
 * rate-limit turns) wakes a read of its own. A wake-up missed all the same waits at most the cap.
 * The owner of this state is this file; the due read (due-read.ts) tells it when a read starts and
 * lands, one read at a time (the claim loop runs one claim round at a time).
 */
export function scheduledRead(options: { capMs: number } = { capMs: SCHEDULED_READ_CAP_MS }) {
  /** Whether the last read that landed answered `next`: only then may a tick skip its read. */
  let known = false;
  /** Wall-clock ms at which a read is needed (what the last read answered, what was noted since). */
  let readAt = Number.NEGATIVE_INFINITY;
  /** When the last read that landed started. */
  let lastRead = Number.NEGATIVE_INFINITY;
  let covered: ReadonlySet<number> | null = null;
  let liveThen = false;
  /** The earliest time noted since the read on its way started: its answer may not include it. */
  let notedSince = Number.POSITIVE_INFINITY;

  function grew(claimable: readonly number[] | null): boolean {
    if (covered === null) return false;
    if (claimable === null) return true;
    for (const s of claimable) if (!covered.has(s)) return true;
    return false;
  }

  return {
    /** A due read starts now with these shards; `live` as the tick would read it. */
    reading(at: number, shards: readonly number[] | null, live: boolean): ReadStart {
      notedSince = Number.POSITIVE_INFINITY;
      return { at, shards: shards === null ? null : new Set(shards), live };
    },
    /**
     * The read that started as `start` landed. `next`: when the earliest pending delivery of its shards
     * after its `now`, no later than `until`, comes due (null: none by then); undefined: not answered.
     */
    landed(start: ReadStart, next: Date | null | undefined): void {
      known = next !== undefined;
      lastRead = start.at;
      covered = start.shards;
      liveThen = start.live;
      const answered = next?.getTime() ?? Number.POSITIVE_INFINITY;
      readAt = Math.min(answered, notedSince);
    },
    /** The latest time a read may ask the store to look ahead to (`until`) and still be useful. */
    horizon(at: number): Date {
      return new Date(at + options.capMs);
    },
    /**
     * Work of this process's shards becomes due at `at` (wall-clock ms), written after the last read
     * started or not seen by it: a read is needed by then.
     */
    noted(at: number): void {
      readAt = Math.min(readAt, at);
      notedSince = Math.min(notedSince, at);
    },
    /**
     * The tick at `now`: whether it must read, given the shards claimable now and whether announcements
     * get through now (a store without a channel and without other processes: true).
     */
    mustRead(now: number, claimable: readonly number[] | null, live: boolean): boolean {
      if (!known || !live || !liveThen) return true;
      // A clock set back counts as time passed: the cap holds whichever way the clock moves.
      if (now >= readAt || Math.abs(now - lastRead) >= options.capMs) return true;
      return grew(claimable);
    },
  };
}

export type ScheduledRead = ReturnType<typeof scheduledRead>;
