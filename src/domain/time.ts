/** ISO 8601 UTC with milliseconds: 2026-11-21T10:00:00.000Z. */
export function isoMillis(d: Date): string {
  return d.toISOString();
}

/** ISO 8601 UTC with second precision: 2026-11-21T10:00:00Z. */
export function isoSeconds(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
}

/** Unix time in whole seconds. */
export function unixSeconds(d: Date): number {
  return Math.floor(d.getTime() / 1000);
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a duration written 500ms, 5s, 2m, 1h or 5d into milliseconds; null when malformed. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (!m) return null;
  const value = Number(m[1]) * (UNITS[m[2]!] ?? 0);
  return Number.isSafeInteger(value) ? value : null;
}

/** Writes milliseconds as the shortest exact duration string (90000 -> "90s"). */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
