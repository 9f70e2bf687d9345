// Payload filters: a MongoDB-style query over an event's envelope, set on an endpoint. This module
// checks a filter and compiles it; event-filter-match.ts evaluates the compiled form against an
// envelope. docs/adr/0014-payload-filters.md has the semantics and the limits.

import type { EventType } from "./event-catalog.ts";
import { dataPathProblem } from "./event-filter-fields.ts";
import { compileFilterRegex, type FilterRegex, REGEX_FLAGS } from "./event-filter-regex.ts";

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
/** Operators that run code or expressions: refused by name, whatever their operand. */
const CODE_OPERATORS = ["$where", "$expr", "$function", "$accumulator", "$jsonSchema"];

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

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

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

/**
 * The first way a filter breaks the size limits (bytes, depth, members, string lengths), or null.
 * Iterative and stopping at the first problem, so no nesting can exhaust the stack.
 */
function sizeProblem(filter: unknown): FilterIssue | null {
  const L = FILTER_LIMITS;
  const stack: { value: unknown; path: Segment[]; depth: number }[] = [{ value: filter, path: [], depth: 1 }];
  let members = 0;
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === "string" && value.length > L.maxStringLength) {
      return { path, message: `must be at most ${L.maxStringLength} characters long` };
    }
    if (value === null || typeof value !== "object") continue;
    if (depth > L.maxDepth)
      return { path, message: `nests too deeply: a filter may nest at most ${L.maxDepth} levels` };
    const entries: [Segment, unknown][] = Array.isArray(value)
      ? value.map((item, i) => [i, item])
      : Object.entries(value);
    members += entries.length;
    if (members > L.maxMembers) {
      return { path: [], message: `must hold at most ${L.maxMembers} keys and array items in all` };
    }
    for (const [key, item] of entries) {
      if (typeof key === "string" && key.length > L.maxStringLength) {
        return { path, message: `has a key longer than ${L.maxStringLength} characters` };
      }
      stack.push({ value: item, path: [...path, key], depth: depth + 1 });
    }
  }
  // Measured once the shape is known to be small, so serialising it cannot overflow the stack.
  if (new TextEncoder().encode(JSON.stringify(filter)).length > L.maxBytes) {
    return { path: [], message: `must be at most ${L.maxBytes} bytes as JSON` };
  }
  return null;
}

const list = (xs: readonly string[]) => xs.join(", ");

/** Checks and compiles filters, collecting every problem with its path. */
class FilterCompiler {
  readonly issues: FilterIssue[] = [];
  private regexes = 0;

  private readonly context: FilterContext;

  constructor(context: FilterContext) {
    this.context = context;
  }

  private fail(path: Segment[], message: string): void {
    this.issues.push({ path, message });
  }

  /** A filter document: its keys are ANDed; each is a logical operator or a field path. */
  document(value: unknown, at: Segment[]): Clause {
    const clauses: Clause[] = [];
    if (!isPlainObject(value)) {
      this.fail(at, 'must be an object such as {"data.status": "bounced"}');
      return { kind: "$and", clauses, at };
    }
    for (const [key, operand] of Object.entries(value)) {
      const here = [...at, key];
      if (key.startsWith("$")) {
        const clause = this.logical(key, operand, here);
        if (clause) clauses.push(clause);
      } else {
        const clause = this.field(key, operand, here);
        if (clause) clauses.push(clause);
      }
    }
    return { kind: "$and", clauses, at };
  }

  private refuseOperator(key: string, here: Segment[], place: "top" | "field"): void {
    if (CODE_OPERATORS.includes(key)) {
      this.fail(here, `is not allowed: a filter cannot run code or expressions (${key})`);
    } else if (place === "top" && key === "$not") {
      this.fail(
        here,
        'applies to a field\'s condition ({"data.status": {"$not": {"$in": [...]}}}); to negate clauses use $nor',
      );
    } else if (place === "top" && (FIELD_OPERATORS as readonly string[]).includes(key)) {
      this.fail(here, `applies to a field: write {"data.status": {"${key}": ...}}`);
    } else if (place === "field" && (LOGICAL_OPERATORS as readonly string[]).includes(key)) {
      this.fail(
        here,
        `joins whole clauses and belongs at the top of a filter or inside ${list(LOGICAL_OPERATORS)}`,
      );
    } else {
      const supported = place === "top" ? LOGICAL_OPERATORS : FIELD_OPERATORS.filter((o) => o !== "$options");
      this.fail(here, `is not a supported operator here; use one of ${list(supported)}`);
    }
  }

  private logical(key: string, operand: unknown, here: Segment[]): Clause | null {
    if (!(LOGICAL_OPERATORS as readonly string[]).includes(key)) {
      this.refuseOperator(key, here, "top");
      return null;
    }
    if (!Array.isArray(operand) || operand.length === 0) {
      this.fail(here, "must be a non-empty array of filter objects");
      return null;
    }
    const clauses = operand.map((item, i) => this.document(item, [...here, i]));
    return { kind: key as "$and" | "$or" | "$nor", clauses, at: here };
  }

  private field(path: string, operand: unknown, here: Segment[]): Clause | null {
    const segments = path.split(".");
    const [head, ...rest] = segments;
    if (segments.some((s) => s === "")) {
      this.fail(here, "is not a field path: it has an empty part");
      return null;
    }
    if (segments.some((s) => s.startsWith("$"))) {
      this.fail(here, "is not a field path: a part starts with $");
      return null;
    }
    if (!(FILTERABLE_FIELDS as readonly string[]).includes(head!)) {
      this.fail(
        here,
        `is not a field a filter can name; use ${list(FILTERABLE_FIELDS.slice(0, 3))} or data.<field>`,
      );
      return null;
    }
    if (head !== "data" && rest.length > 0) {
      this.fail(here, `is not a field path: ${head} has no fields`);
      return null;
    }
    if (head === "data" && this.context.events !== undefined) {
      const problem = dataPathProblem(this.context.events, rest);
      if (problem) {
        this.fail(here, problem);
        return null;
      }
    }
    const instant = head === "occurred_at";
    const tests = this.condition(operand, here, instant);
    return tests ? { kind: "field", field: path, segments, instant, tests, at: here } : null;
  }

  /** A field's condition: an operator object ({"$in": [...]}) or a value it must equal. */
  private condition(operand: unknown, here: Segment[], instant: boolean): FieldTest[] | null {
    if (!isPlainObject(operand)) return this.equality("$eq", operand, here, instant);
    const keys = Object.keys(operand);
    const operators = keys.filter((k) => k.startsWith("$"));
    if (operators.length === 0) return this.equality("$eq", operand, here, instant);
    if (operators.length !== keys.length) {
      this.fail(here, 'mixes operators and fields: use either {"$in": [...]} or an object to equal');
      return null;
    }
    return this.operators(operand, here, instant);
  }

  private equality(op: "$eq" | "$ne", value: unknown, at: Segment[], instant: boolean): FieldTest[] | null {
    if (instant && instantOf(value) === null) {
      this.fail(
        at,
        "must be an ISO 8601 timestamp such as 2026-11-21T10:00:00Z (occurred_at is compared as an instant)",
      );
      return null;
    }
    return [{ op, value, at }];
  }

  private operators(operand: Record<string, unknown>, here: Segment[], instant: boolean): FieldTest[] | null {
    const tests: FieldTest[] = [];
    const before = this.issues.length;
    for (const [op, value] of Object.entries(operand)) {
      const at = [...here, op];
      switch (op) {
        case "$eq":
        case "$ne":
          tests.push(...(this.equality(op, value, at, instant) ?? []));
          break;
        case "$in":
        case "$nin":
          if (!Array.isArray(value)) {
            this.fail(at, "must be an array of values");
          } else if (instant && value.some((v) => instantOf(v) === null)) {
            this.fail(at, "must list ISO 8601 timestamps (occurred_at is compared as an instant)");
          } else tests.push({ op, values: value, at });
          break;
        case "$gt":
        case "$gte":
        case "$lt":
        case "$lte":
          if (instant) {
            if (instantOf(value) === null) {
              this.fail(
                at,
                "must be an ISO 8601 timestamp such as 2026-11-21T10:00:00Z (occurred_at is compared as an instant)",
              );
            } else tests.push({ op, value: value as string, at });
          } else if (typeof value !== "number" && typeof value !== "string") {
            this.fail(
              at,
              "must be a number or a string (values are compared only with values of the same type)",
            );
          } else tests.push({ op, value, at });
          break;
        case "$exists":
          if (typeof value !== "boolean") this.fail(at, "must be true or false");
          else tests.push({ op, value, at });
          break;
        case "$regex": {
          const options = operand.$options;
          if (options !== undefined && typeof options !== "string") {
            this.fail([...here, "$options"], `must be a string of flags (${list(REGEX_FLAGS)})`);
            break;
          }
          const regex = this.regex(value, options ?? "", at);
          if (regex) tests.push({ op, regex, at });
          break;
        }
        case "$options":
          if (!("$regex" in operand)) this.fail(at, "applies only beside $regex");
          break;
        case "$not": {
          if (
            !isPlainObject(value) ||
            Object.keys(value).length === 0 ||
            !Object.keys(value).every((k) => k.startsWith("$"))
          ) {
            this.fail(at, 'must be an object of operators such as {"$in": ["bounced", "failed"]}');
            break;
          }
          const inner = this.operators(value, at, instant);
          if (inner) tests.push({ op, tests: inner, at });
          break;
        }
        default:
          this.refuseOperator(op, at, "field");
      }
    }
    return this.issues.length === before ? tests : null;
  }

  private regex(pattern: unknown, options: string, at: Segment[]): FilterRegex | null {
    if (typeof pattern !== "string") {
      this.fail(at, "must be a string (a regular expression)");
      return null;
    }
    if (++this.regexes > FILTER_LIMITS.maxRegexes) {
      this.fail(at, `is one $regex too many: a filter may hold at most ${FILTER_LIMITS.maxRegexes}`);
      return null;
    }
    const compiled = compileFilterRegex(pattern, options);
    if (!compiled.ok) {
      const where = compiled.message.startsWith("has an unsupported flag")
        ? [...at.slice(0, -1), "$options"]
        : at;
      this.fail(where, compiled.message);
      return null;
    }
    return compiled.regex;
  }
}

/**
 * Checks a filter and compiles it. With `context.events`, every `data.*` path must exist in the data
 * of at least one of those event types. Returns every problem found, each with its path in the filter.
 */
export function compileFilter(
  filter: unknown,
  context: FilterContext = {},
): { ok: true; clause: Clause } | { ok: false; issues: FilterIssue[] } {
  const size = sizeProblem(filter);
  if (size) return { ok: false, issues: [size] };
  const compiler = new FilterCompiler(context);
  const clause = compiler.document(filter, []);
  return compiler.issues.length > 0 ? { ok: false, issues: compiler.issues } : { ok: true, clause };
}

/** A filter's problems (empty when it is valid), each with a dotted path below `prefix`. */
export function filterIssues(
  filter: unknown,
  context: FilterContext,
  prefix = "filter",
): { path: string; message: string }[] {
  const r = compileFilter(filter, context);
  return r.ok ? [] : r.issues.map((i) => ({ path: [prefix, ...i.path].join("."), message: i.message }));
}
