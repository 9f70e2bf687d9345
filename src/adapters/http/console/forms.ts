import type { Ordering } from "../../../domain/endpoint.ts";
import { invalid } from "../../../domain/errors.ts";
import { type EventType, isEventType } from "../../../domain/event-catalog.ts";
import { parseRateLimitText, type RateLimit } from "../../../domain/rate-limit.ts";
import { parseDuration } from "../../../domain/time.ts";

export type Form = Record<string, string | File | (string | File)[]>;

/** One text field of a form ("" when absent). */
export function field(form: Form, name: string): string {
  const v = form[name];
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === "string" ? first.trim() : "";
}

/** Every value of a repeated field (checkboxes). */
export function fields(form: Form, name: string): string[] {
  const v = form[name];
  const all = Array.isArray(v) ? v : v === undefined ? [] : [v];
  return all.filter((x): x is string => typeof x === "string");
}

/**
 * A moment typed by a person: a duration back from now ("6h", "30m", "2d") or an ISO 8601 time.
 * Empty gives undefined; anything else is a validation error on `path`.
 */
export function parseMoment(text: string | undefined, now: Date, path: string): Date | undefined {
  const t = text?.trim();
  if (!t) return undefined;
  const ms = parseDuration(t);
  if (ms !== null) return new Date(now.getTime() - ms);
  const d = new Date(t);
  if (/^\d{4}-\d{2}-\d{2}/.test(t) && !Number.isNaN(d.getTime())) return d;
  throw invalid([
    { path, message: `"${t}" is neither a duration like 6h nor a UTC time like 2026-11-21T10:00:00Z` },
  ]);
}

/** A rate limit typed by a person (`5/s`, `300/m`); empty gives null (none); anything else is a validation error. */
export function parseRateLimitField(text: string): RateLimit | null {
  const t = text.trim();
  if (!t || t.toLowerCase() === "none") return null;
  const limit = parseRateLimitText(t);
  if (limit) return limit;
  throw invalid([{ path: "rate_limit", message: `"${t}" is not a limit like 5/s or 300/m` }]);
}

/** The ordering select: `none` or `fifo`; anything else is a validation error. */
export function parseOrderingField(text: string): Ordering {
  if (text === "none" || text === "fifo") return text;
  throw invalid([{ path: "ordering", message: "must be none or fifo" }]);
}

/** The ticked event types: at least one, each of the catalog. */
export function eventTypes(values: string[]): EventType[] {
  if (values.length === 0) {
    throw invalid([{ path: "events", message: "tick at least one event type" }]);
  }
  const unknown = values.filter((v) => !isEventType(v));
  if (unknown.length > 0) throw invalid([{ path: "events", message: `unknown event type "${unknown[0]}"` }]);
  return [...new Set(values)] as EventType[];
}
