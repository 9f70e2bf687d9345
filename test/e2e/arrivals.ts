import type { Delivery } from "../../clients/typescript/client.ts";

/**
 * Checks one (event, endpoint) pair's arrivals (receiver times, ms) against Herald's records of it. Delivery
 * is at least once (CONTRACT): the pair is recorded as succeeded once, by its last attempt, and every other
 * attempt of it is recorded as failed by a timeout: a request still on its way, or whose answer was not read,
 * when HERALD_DELIVERY_TIMEOUT ran out (a starved machine does that) may have reached the receiver, and the
 * next attempt goes after it. So an arrival after the first is explained by a timed-out attempt that ended
 * (attempted_at + duration_ms, 1 ms for rounding) before it, each such attempt explaining one arrival, or
 * by `crashed(t)`, when the arrival before it (at t) was sent by a process that died before recording it.
 * Answers what does not fit (nothing when all does) and how many arrivals the timeouts explain.
 */
export function explainArrivals(
  arrivals: readonly number[],
  records: readonly Delivery[],
  crashed: (t: number) => boolean = () => false,
): { problems: string[]; timedOut: number; byTimeout: number } {
  const problems: string[] = [];
  const byAttempt = [...records].sort((a, b) => a.attempt - b.attempt);
  const last = byAttempt.at(-1);
  if (last?.status !== "succeeded") problems.push(`last attempt ${last?.attempt} is ${last?.status}`);
  const earlier = byAttempt.slice(0, -1);
  const others = earlier.filter((d) => d.status !== "failed" || d.error !== "timeout");
  for (const d of others) problems.push(`attempt ${d.attempt} is ${d.status} (${d.error})`);
  const ends = earlier
    .filter((d) => d.status === "failed" && d.error === "timeout" && d.attempted_at !== null)
    .map((d) => new Date(d.attempted_at!).getTime() + (d.duration_ms ?? 0) - 1);
  const times = [...arrivals].sort((a, b) => a - b);
  if (times.length === 0) problems.push("never arrived");
  let next = 0;
  let byTimeout = 0;
  for (let i = 1; i < times.length; i++) {
    if (next < ends.length && times[i]! >= ends[next]!) {
      next++;
      byTimeout++;
    } else if (!crashed(times[i - 1]!)) {
      problems.push(
        `arrival ${i + 1} at ${new Date(times[i]!).toISOString()} is explained by no timeout or crash`,
      );
    }
  }
  return { problems, timedOut: ends.length, byTimeout };
}
