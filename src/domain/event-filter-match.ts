import { type Clause, type FieldTest, type FilterIssue, instantOf } from "./event-filter.ts";

// Evaluating a compiled filter against an envelope. Semantics (docs/adr/0014-payload-filters.md):
// MongoDB's, with strict types: a value equals or compares only with a value of the same JSON type;
// occurred_at compares as an instant; a path through an array looks at every element.

/** Whether an event matches a filter, and if not, every clause that failed, by its path in the filter. */
export interface FilterVerdict {
  matches: boolean;
  reasons: { path: string; message: string }[];
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Where a path stops at an object lacking the next field, or at a value with no fields (null, 4, "x"). */
const MISSING: unique symbol = Symbol("missing");

const isIndex = (segment: string) => /^\d+$/.test(segment);

/**
 * What a dotted path reaches, by MongoDB's rules: through an array, a numeric part picks an item and
 * every object item is looked into as well (scalars and nested arrays are passed over, so `a.b` on
 * `a: [null, 1, []]` reaches nothing); an object lacking the field, or a scalar in the way, is MISSING,
 * which null equals (`a.b` on `a: [{"b": 3}, {}]` reaches 3 and MISSING). Each value reached goes to
 * `reached`; to `seen`, what the tests look at: the value, and the items of an array reached by field
 * (an array reached by index is looked at whole: `a.0` does not match 42 in `a: [[42]]`).
 */
function walk(
  value: unknown,
  segments: readonly string[],
  i: number,
  byIndex: boolean,
  seen: unknown[],
  reached: unknown[] | null,
): void {
  if (i === segments.length) {
    reached?.push(value);
    seen.push(value);
    if (!byIndex && Array.isArray(value)) for (const item of value) seen.push(item);
    return;
  }
  const segment = segments[i]!;
  if (Array.isArray(value)) {
    if (isIndex(segment) && Number(segment) < value.length) {
      walk(value[Number(segment)], segments, i + 1, true, seen, reached);
    }
    for (const item of value) if (isPlainObject(item)) walk(item, segments, i, false, seen, reached);
  } else if (isPlainObject(value) && Object.hasOwn(value, segment)) {
    walk(value[segment], segments, i + 1, false, seen, reached);
  } else {
    reached?.push(MISSING);
    seen.push(MISSING);
  }
}

/** JSON equality: same type, same value; arrays in order; objects with the same keys, in any order. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  }
  const ka = Object.keys(a);
  const rb = b as Record<string, unknown>;
  return (
    ka.length === Object.keys(rb).length &&
    ka.every((k) => Object.hasOwn(rb, k) && same((a as Record<string, unknown>)[k], rb[k]))
  );
}

/** Strings in code-point order (the order of their UTF-8 bytes, as MongoDB compares them). */
function compareStrings(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return x.done ? (y.done ? 0 : -1) : 1;
    const d = x.value.codePointAt(0)! - y.value.codePointAt(0)!;
    if (d !== 0) return d;
  }
}

/** a − b in sign, or null when the two are not comparable (different types, not instants). */
function compare(a: unknown, b: number | string, instant: boolean): number | null {
  if (instant) {
    const x = instantOf(a);
    const y = instantOf(b);
    return x === null || y === null ? null : x - y;
  }
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "string" && typeof b === "string") return compareStrings(a, b);
  return null;
}

function equals(value: unknown, seen: readonly unknown[], instant: boolean): boolean {
  // As in MongoDB, null stands for "null or missing".
  if (value === null) return seen.some((v) => v === null || v === MISSING);
  if (instant) {
    const ms = instantOf(value);
    return seen.some((v) => instantOf(v) === ms);
  }
  return seen.some((v) => same(v, value));
}

/** Whether the test holds of what the path reached (`seen`: its candidates). */
function holds(t: FieldTest, seen: readonly unknown[], instant: boolean): boolean {
  switch (t.op) {
    case "$eq":
      return equals(t.value, seen, instant);
    case "$ne":
      return !equals(t.value, seen, instant);
    case "$in":
      return t.values.some((v) => equals(v, seen, instant));
    case "$nin":
      return !t.values.some((v) => equals(v, seen, instant));
    case "$exists":
      return seen.some((v) => v !== MISSING) === t.value;
    case "$regex":
      return seen.some((v) => typeof v === "string" && t.regex.test(v));
    case "$not":
      return !t.tests.every((inner) => holds(inner, seen, instant));
    case "$gt":
    case "$gte":
    case "$lt":
    case "$lte":
      return seen.some((v) => {
        const d = compare(v, t.value, instant);
        if (d === null) return false;
        return t.op === "$gt" ? d > 0 : t.op === "$gte" ? d >= 0 : t.op === "$lt" ? d < 0 : d <= 0;
      });
  }
}

const shown = (v: unknown): string => {
  const text = JSON.stringify(v) ?? "undefined";
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

function expected(t: FieldTest): string {
  switch (t.op) {
    case "$eq":
      return t.value === null ? "null or missing" : `equal to ${shown(t.value)}`;
    case "$ne":
      return t.value === null ? "present and not null" : `not equal to ${shown(t.value)}`;
    case "$in":
      return `one of ${shown(t.values)}`;
    case "$nin":
      return `none of ${shown(t.values)}`;
    case "$gt":
      return `greater than ${shown(t.value)}`;
    case "$gte":
      return `at least ${shown(t.value)}`;
    case "$lt":
      return `less than ${shown(t.value)}`;
    case "$lte":
      return `at most ${shown(t.value)}`;
    case "$exists":
      return t.value ? "present" : "absent";
    case "$regex":
      return `a string matching /${t.regex.source}/${t.regex.flags}`;
    case "$not":
      return `not (${t.tests.map(expected).join(" and ")})`;
  }
}

function actual(reached: readonly unknown[]): string {
  const values = reached.filter((v) => v !== MISSING);
  if (values.length === 0) return "missing";
  return reached.length === 1 ? shown(values[0]) : `${shown(values)} (through an array)`;
}

/** Whether the clause holds; when `why` is given, each failed part is added to it. */
function clauseHolds(c: Clause, root: unknown, why: FilterIssue[] | null): boolean {
  switch (c.kind) {
    case "$and": {
      let ok = true;
      for (const sub of c.clauses) {
        if (clauseHolds(sub, root, why)) continue;
        ok = false;
        if (!why) return false;
      }
      return ok;
    }
    case "$or": {
      const branches: FilterIssue[] | null = why ? [] : null;
      for (const sub of c.clauses) if (clauseHolds(sub, root, branches)) return true;
      why?.push(
        { path: c.at, message: `none of its ${c.clauses.length} clauses matched` },
        ...(branches ?? []),
      );
      return false;
    }
    case "$nor": {
      for (const [i, sub] of c.clauses.entries()) {
        if (!clauseHolds(sub, root, null)) continue;
        why?.push({
          path: [...c.at, i],
          message: "matched, and $nor requires that none of its clauses match",
        });
        return false;
      }
      return true;
    }
    case "field": {
      const seen: unknown[] = [];
      const reached: unknown[] | null = why ? [] : null;
      walk(root, c.segments, 0, false, seen, reached);
      let ok = true;
      for (const t of c.tests) {
        if (holds(t, seen, c.instant)) continue;
        ok = false;
        if (!why) return false;
        why.push({ path: t.at, message: `${c.field} is ${actual(reached ?? [])}; expected ${expected(t)}` });
      }
      return ok;
    }
  }
}

/** Whether the envelope matches the compiled filter (fan-out: no explanation is built). */
export function clauseMatches(clause: Clause, envelope: object): boolean {
  return clauseHolds(clause, envelope, null);
}

/** Whether the envelope matches, and every clause that failed, with its dotted path below `prefix`. */
export function explainMatch(clause: Clause, envelope: object, prefix = "filter"): FilterVerdict {
  const why: FilterIssue[] = [];
  const matches = clauseHolds(clause, envelope, why);
  return { matches, reasons: why.map((r) => ({ path: [prefix, ...r.path].join("."), message: r.message })) };
}
