/**
 * How long a result waits to be written with others (stage 6): long enough for a batch of about
 * `batchRows` (20) at the rate results arrive, never longer than the cap, and the short `delayMs` when
 * that rate would not gather four within the cap anyway. With several processes each records only what it
 * sent, so at one rate of work each gets a share of the results: a fixed wait made each process's batches
 * that much smaller, and the statements per delivery that much larger (docs/performance.md). So the cap
 * is `batchMs` divided by this process's `share` of the shards (at most `MAX_STRETCH` times `batchMs`):
 * ten processes each wait up to ten times as long for a tenth of the results, and the results waiting in
 * the whole cluster (what a SIGKILL of a process sends again, ADR 30) stay about `batchMs` of its sends.
 * A result that something waits for (a FIFO endpoint's next event) is written after `minMs` (the
 * recorder's `soon`).
 */
export function recordDelay(o: {
  delayMs: number;
  batchMs?: number;
  batchRows?: number;
  /** The share of the shards this process owns (0–1); 1 when not told. */
  share?: () => number;
}) {
  const options = { minMs: o.delayMs, maxMs: o.batchMs ?? o.delayMs, rows: o.batchRows ?? 20, fewest: 4 };
  let last = Number.NaN;
  /** Mean gap between arrivals (ms), smoothed; infinite until two have arrived. */
  let gap = Number.POSITIVE_INFINITY;

  return {
    /** A result arrived at `t` (monotonic ms). */
    arrived(t: number): void {
      const g = Math.max(0, t - last);
      if (!Number.isNaN(g)) gap = Number.isFinite(gap) ? gap * 0.9 + g * 0.1 : g;
      last = t;
    },
    /** The wait for the batch starting now. */
    delayMs(): number {
      const share = Math.min(1, Math.max(1 / MAX_STRETCH, o.share?.() ?? 1));
      const maxMs = options.maxMs / share;
      if (!Number.isFinite(gap) || maxMs < options.fewest * gap) return options.minMs;
      return Math.max(options.minMs, Math.min(maxMs, options.rows * gap));
    },
  };
}

/** The cap grows at most this many times for a small share (ten processes). */
const MAX_STRETCH = 10;
