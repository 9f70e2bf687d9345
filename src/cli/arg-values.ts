import { parseRateLimitText, RATE_LIMIT_MAX } from "../domain/rate-limit.ts";
import { SIGNATURE_SCHEMES, type SignatureScheme } from "../domain/signature-scheme.ts";
import { parseDuration } from "../domain/time.ts";
import { type Command, usageError } from "./command.ts";

/** `--events a,b --events c` → [a, b, c]. */
export function splitList(values: readonly string[] | undefined): string[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  return values
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
}

/**
 * A point in time for a query: an ISO 8601 timestamp, a date (midnight UTC), or a duration ago
 * (`30m`, `2h`, `3d`). ISO timestamps are passed on unchanged; the API checks their format.
 */
export function instant(command: Command, flag: string, text: string, now = new Date()): string {
  const ago = parseDuration(text);
  if (ago !== null) return new Date(now.getTime() - ago).toISOString();
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return `${text}T00:00:00Z`;
  if (Number.isNaN(Date.parse(text))) {
    throw usageError(
      command,
      `${flag} must be an ISO 8601 time (2026-11-21T10:00:00Z) or a duration ago (30m, 2h, 3d), not "${text}"`,
    );
  }
  return text;
}

/** An integer option within bounds. */
export function integer(command: Command, flag: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw usageError(command, `${flag} must be a whole number from ${min} to ${max}, not "${text}"`);
  }
  return n;
}

/** A length of time in whole seconds: `3600`, `90s`, `2h`, `7d`. */
export function seconds(command: Command, flag: string, text: string): number {
  if (/^\d+$/.test(text.trim())) return Number(text);
  const ms = parseDuration(text);
  if (ms === null || ms % 1000 !== 0) {
    throw usageError(command, `${flag} must be seconds or a duration (90s, 2h, 7d), not "${text}"`);
  }
  return ms / 1000;
}

/** The API's `rate_limit` JSON of `--rate-limit 5/s` or `300/m`; `none` removes a limit (null). */
export function rateLimitArg(
  command: Command,
  flag: string,
  text: string,
  allowNone: boolean,
): { per_second: number } | { per_minute: number } | null {
  if (allowNone && text.trim().toLowerCase() === "none") return null;
  const limit = parseRateLimitText(text);
  const max = limit ? RATE_LIMIT_MAX[limit.per] : 0;
  if (!limit || limit.count < 1 || limit.count > max) {
    throw usageError(
      command,
      `${flag} must be N/s (1-${RATE_LIMIT_MAX.second}) or N/m (1-${RATE_LIMIT_MAX.minute})${allowNone ? " or none" : ""}, not "${text}"`,
    );
  }
  return limit.per === "second" ? { per_second: limit.count } : { per_minute: limit.count };
}

/**
 * `--header NAME=VALUE` (repeatable) → {NAME: VALUE}. Split at the first `=`, so a value may hold
 * more. A message about a bad one names the header, never its value (values are credentials).
 */
export function headerPairs(
  command: Command,
  values: readonly string[] | undefined,
): Record<string, string> | undefined {
  if (values === undefined || values.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const [i, pair] of values.entries()) {
    const at = pair.indexOf("=");
    if (at <= 0) {
      throw usageError(command, `--header must be NAME=VALUE (the ${ordinal(i + 1)} --header has no NAME=)`);
    }
    const name = pair.slice(0, at);
    if (Object.hasOwn(out, name)) throw usageError(command, `--header ${name} is given twice`);
    out[name] = pair.slice(at + 1);
  }
  return out;
}

function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${suffix}`;
}

/** `--signature-scheme` checked against the schemes Herald knows. */
export function signatureScheme(command: Command, text: string | undefined): SignatureScheme | undefined {
  if (text === undefined) return undefined;
  if (!(SIGNATURE_SCHEMES as readonly string[]).includes(text)) {
    throw usageError(
      command,
      `--signature-scheme must be one of ${SIGNATURE_SCHEMES.join(", ")}, not "${text}"`,
    );
  }
  return text as SignatureScheme;
}

/** `--ordering fifo` or `none`. */
export function orderingArg(command: Command, flag: string, text: string): "fifo" | "none" {
  const t = text.trim().toLowerCase();
  if (t === "fifo" || t === "none") return t;
  throw usageError(command, `${flag} must be fifo or none, not "${text}"`);
}
