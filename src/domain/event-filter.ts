// Payload filters: a MongoDB-style query over an event's envelope, set on an endpoint. This module
// holds the language: its types, operators and limits. event-filter-compile.ts checks a filter and
// compiles it; event-filter-match.ts evaluates the compiled form against an envelope.
// docs/adr/0014-payload-filters.md has the semantics and the limits.

import type { EventType } from "./event-catalog.ts";
import type { FilterRegex } from "./event-filter-regex.ts";

/** A filter as the endpoint keeps it and the API shows it: the JSON object it was given. */
export type EventFilter = { readonly [key: string]: unknown };

/** Limits on one filter: its JSON size, nesting, members, strings and regular expressions. */
export const FILTER_LIMITS = {
  /** UTF-8 bytes of the filter serialised as JSON. */
  maxBytes: 4096,
  /** Nesting of objects and arrays; the filter object is level 1. */
  maxDepth: 10,
  /** Keys and array items in all. */
  maxMembers: 200,
  /** Characters of a string operand or a field path. */
  maxStringLength: 1024,
  /** $regex clauses in one filter. */
  maxRegexes: 8,
} as const;

/** The envelope fields a filter may name; `data` may be followed by a path into the payload. */
export const FILTERABLE_FIELDS = ["type", "resource_id", "occurred_at", "data"] as const;

export const LOGICAL_OPERATORS = ["$and", "$or", "$nor"] as const;
export const FIELD_OPERATORS = [
  "$eq",
  "$ne",
  "$in",
  "$nin",
  "$gt",
  "$gte",
  "$lt",
  "$lte",
  "$exists",
  "$regex",
  "$options",
  "$not",
] as const;

export type Segment = string | number;
/** One problem with a filter: where in the filter (keys and array indexes) and what. */
export interface FilterIssue {
  path: Segment[];
  message: string;
}

export type Comparison = "$gt" | "$gte" | "$lt" | "$lte";

/** A test on one field's value; `at` is where it is written in the filter. */
export type FieldTest =
  | { op: "$eq" | "$ne"; value: unknown; at: Segment[] }
  | { op: "$in" | "$nin"; values: unknown[]; at: Segment[] }
  | { op: Comparison; value: number | string; at: Segment[] }
  | { op: "$exists"; value: boolean; at: Segment[] }
  | { op: "$regex"; regex: FilterRegex; at: Segment[] }
  | { op: "$not"; tests: FieldTest[]; at: Segment[] };

/** A compiled filter: clauses joined by logic, each field's tests on its path. */
export type Clause =
  | { kind: "$and" | "$or" | "$nor"; clauses: Clause[]; at: Segment[] }
  | { kind: "field"; field: string; segments: string[]; instant: boolean; tests: FieldTest[]; at: Segment[] };

/** What a filter is checked against: the endpoint's event types, whose data fields it may name. */
export interface FilterContext {
  events?: readonly EventType[] | undefined;
}

// ISO 8601 with a time zone, or a date (midnight UTC): what occurred_at is compared with.
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(T(\d{2}):(\d{2})(:(\d{2})(\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2})))?$/;

/** Days in a month of the proleptic Gregorian calendar (month 1–12). */
function daysIn(year: number, month: number): number {
  if (month !== 2) return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}

/**
 * The instant of an ISO 8601 timestamp or date, in ms since the epoch; null when it is not one.
 * Every field is checked against the calendar and the clock first: Date.parse rolls 2026-02-30 over
 * to March 2 in some runtimes, and a filter must not compare with a day that does not exist.
 */
export function instantOf(value: unknown): number | null {
  if (typeof value !== "string") return null;
  const m = TIMESTAMP.exec(value);
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  const [hour, minute, second] = [Number(m[5] ?? 0), Number(m[6] ?? 0), Number(m[8] ?? 0)];
  if (hour > 23 || minute > 59 || second > 59) return null;
  if (m[11] !== undefined && (Number(m[11]) > 23 || Number(m[12]) > 59)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}
