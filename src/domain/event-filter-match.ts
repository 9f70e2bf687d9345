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

/** The values a dotted path reaches: none when it is missing, several through arrays. */
function resolve(root: unknown, segments: readonly string[]): unknown[] {
  let current: unknown[] = [root];
  for (const segment of segments) {
    const next: unknown[] = [];
    for (const value of current) {
      if (Array.isArray(value)) {
        if (/^\d+$/.test(segment) && Number(segment) < value.length) next.push(value[Number(segment)]);
        for (const item of value)
          if (isPlainObject(item) && Object.hasOwn(item, segment)) next.push(item[segment]);
      } else if (isPlainObject(value) && Object.hasOwn(value, segment)) {
        next.push(value[segment]);
      }
    }
    current = next;
  }
  return current;
}

/** The values a test looks at: each value found, and the items of those that are arrays. */
const candidates = (found: readonly unknown[]): unknown[] =>
  found.flatMap((v) => (Array.isArray(v) ? [v, ...v] : [v]));

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

function equals(value: unknown, found: readonly unknown[], instant: boolean): boolean {
  // As in MongoDB, null stands for "null or missing".
  if (value === null) return found.length === 0 || candidates(found).some((v) => v === null);
  if (instant) {
    const ms = instantOf(value);
    return candidates(found).some((v) => instantOf(v) === ms);
  }
  return candidates(found).some((v) => same(v, value));
}

function holds(t: FieldTest, found: readonly unknown[], instant: boolean): boolean {
  switch (t.op) {
    case "$eq":
      return equals(t.value, found, instant);
    case "$ne":
      return !equals(t.value, found, instant);
    case "$in":
      return t.values.some((v) => equals(v, found, instant));
    case "$nin":
      return !t.values.some((v) => equals(v, found, instant));
    case "$exists":
      return found.length > 0 === t.value;
    case "$regex":
      return candidates(found).some((v) => typeof v === "string" && t.regex.test(v));
    case "$not":
      return !t.tests.every((inner) => holds(inner, found, instant));
    case "$gt":
    case "$gte":
    case "$lt":
    case "$lte":
      return candidates(found).some((v) => {
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

const actual = (found: readonly unknown[]): string =>
  found.length === 0
    ? "missing"
    : found.length === 1
      ? shown(found[0])
      : `${shown(found)} (through an array)`;

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
      const found = resolve(root, c.segments);
      let ok = true;
      for (const t of c.tests) {
        if (holds(t, found, c.instant)) continue;
        ok = false;
        if (!why) return false;
        why.push({ path: t.at, message: `${c.field} is ${actual(found)}; expected ${expected(t)}` });
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
