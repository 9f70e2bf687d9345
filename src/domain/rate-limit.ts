// An endpoint's rate limit, and the pace that keeps deliveries under it (ADR 16).

export const RATE_LIMIT_PERIODS = ["second", "minute"] as const;
export type RateLimitPeriod = (typeof RATE_LIMIT_PERIODS)[number];

/** At most `count` deliveries to the endpoint per second or per minute. */
export interface RateLimit {
  count: number;
  per: RateLimitPeriod;
}

const PERIOD_MS: Record<RateLimitPeriod, number> = { second: 1_000, minute: 60_000 };

/** The largest count accepted for each period. */
export const RATE_LIMIT_MAX: Record<RateLimitPeriod, number> = { second: 1_000, minute: 60_000 };

/**
 * The least time between the starts of two sends to the endpoint: the period divided by the count.
 * Sends that far apart never put more than `count` starts in any window of one period.
 */
export function sendIntervalMs(limit: RateLimit): number {
  return PERIOD_MS[limit.per] / limit.count;
}

/** `5/s`, `300/m`: a limit as people write it. */
export function rateLimitText(limit: RateLimit): string {
  return `${limit.count}/${limit.per === "second" ? "s" : "m"}`;
}

/**
 * Reads `5/s`, `5/sec`, `300/m`, `300/min` (also `per second`/`per minute` spelled out); null when the
 * text is not a limit. The count is checked against RATE_LIMIT_MAX by the caller's schema.
 */
export function parseRateLimitText(text: string): RateLimit | null {
  const m = /^\s*(\d+)\s*\/\s*(s|sec|second|m|min|minute)\s*$/i.exec(text);
  if (!m) return null;
  const count = Number(m[1]);
  if (!Number.isSafeInteger(count)) return null;
  return { count, per: m[2]!.toLowerCase().startsWith("s") ? "second" : "minute" };
}

/** Issues of a limit against the accepted ranges (empty when it is valid). */
export function rateLimitIssues(limit: RateLimit): string[] {
  const max = RATE_LIMIT_MAX[limit.per];
  return Number.isInteger(limit.count) && limit.count >= 1 && limit.count <= max
    ? []
    : [`must be an integer from 1 to ${max} per ${limit.per}`];
}

/** Limits up to this count per period are kept exactly with catch-up (below); larger ones by spacing alone. */
export const PACE_MEMORY_MAX = 1_000;

/**
 * One endpoint's pace in the process that owns its shard (ADR 16). Two rules decide when the next
 * attempt may start:
 *
 * - **the window**: it starts no sooner than one period after the `count`-th latest start, so no window
 *   of one period ever holds more than `count` starts. The latest starts are kept for that (a ring of
 *   `count` entries); above PACE_MEMORY_MAX per period none are kept and starts are spaced one interval
 *   apart instead, which implies the window rule;
 * - **the even pace**: turns come one interval (period / count) apart; a start that came late does not
 *   push the next turn back, so timer lateness is caught up, but no two starts come closer than half
 *   an interval (no bursts).
 *
 * A pace starts empty: its first attempt waits one period from `since`, the moment this owner took the
 * endpoint's shard (every attempt of a previous owner started before then), so a handover never lets
 * two owners' attempts together exceed the limit. Mutable: the engine keeps one per endpoint.
 */
export interface Pace {
  count: number;
  periodMs: number;
  intervalMs: number;
  /** The even pace's next turn (ms). */
  nextAt: number;
  /** The latest starts, a ring of at most `count` entries (none above PACE_MEMORY_MAX). */
  starts: number[];
  /** Index in `starts` of the oldest start. */
  oldest: number;
}

const exact = (p: Pace) => p.count <= PACE_MEMORY_MAX;

/** A pace for an endpoint whose shard this process has owned since `since` (ms). */
export function startPace(limit: RateLimit, since: number): Pace {
  const periodMs = PERIOD_MS[limit.per];
  const intervalMs = periodMs / limit.count;
  return {
    count: limit.count,
    periodMs,
    intervalMs,
    nextAt: since + (limit.count <= PACE_MEMORY_MAX ? periodMs : intervalMs),
    starts: [],
    oldest: 0,
  };
}

/** The earliest moment the next attempt may start. */
export function nextStartAt(p: Pace): number {
  const full = exact(p) && p.starts.length === p.count;
  return full ? Math.max(p.nextAt, p.starts[p.oldest]! + p.periodMs) : p.nextAt;
}

/** Notes an attempt that started at `at` (no sooner than nextStartAt). */
export function paceStarted(p: Pace, at: number): void {
  if (!exact(p)) {
    p.nextAt = Math.max(p.nextAt, at) + p.intervalMs;
    return;
  }
  if (p.starts.length < p.count) p.starts.push(at);
  else {
    p.starts[p.oldest] = at;
    p.oldest = (p.oldest + 1) % p.count;
  }
  p.nextAt = Math.max(p.nextAt + p.intervalMs, at + p.intervalMs / 2);
}

/** The latest start noted; null when none. */
export function lastStart(p: Pace): number | null {
  if (p.starts.length === 0) return exact(p) ? null : p.nextAt - p.intervalMs;
  return p.starts[(p.oldest + p.starts.length - 1) % p.starts.length]!;
}

/**
 * The pace under a changed limit: the latest starts carry over (as many as the new count keeps) and
 * the next turn comes one new interval after the latest start. Coming from a limit above
 * PACE_MEMORY_MAX (no starts kept), the next attempt waits one period after the latest start.
 */
export function repace(p: Pace, limit: RateLimit, since: number): Pace {
  const next = startPace(limit, since);
  const last = lastStart(p);
  if (last === null) return { ...next, nextAt: Math.max(next.nextAt, p.nextAt) };
  if (exact(next)) {
    const latest: number[] = [];
    for (let i = 0; i < p.starts.length; i++) latest.push(p.starts[(p.oldest + i) % p.starts.length]!);
    next.starts = latest.slice(-next.count);
    if (!exact(p)) next.nextAt = Math.max(next.nextAt, last + next.periodMs);
  }
  next.nextAt = Math.max(next.nextAt, last + next.intervalMs);
  return next;
}

/** Whether the pace remembers nothing that could hold back an attempt starting at `now` or later. */
export function paceIdle(p: Pace, now: number): boolean {
  const last = lastStart(p);
  return now >= nextStartAt(p) && (last === null || now >= last + p.periodMs);
}

/**
 * How many attempts the even pace allows from `now` to `now + horizonMs` (the window rule may allow
 * fewer): the claim takes no more than this for the endpoint.
 */
export function turnsWithin(p: Pace, now: number, horizonMs: number): number {
  const first = Math.max(nextStartAt(p), now);
  const end = now + horizonMs;
  return first > end ? 0 : Math.floor((end - first) / p.intervalMs) + 1;
}
