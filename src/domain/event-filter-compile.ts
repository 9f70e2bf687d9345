// Checking a payload filter and compiling it into clauses (event-filter.ts has the language,
// event-filter-match.ts evaluates the clauses). docs/adr/0014-payload-filters.md.

import {
  type Clause,
  FIELD_OPERATORS,
  FILTER_LIMITS,
  FILTERABLE_FIELDS,
  type FieldTest,
  type FilterContext,
  type FilterIssue,
  instantOf,
  LOGICAL_OPERATORS,
  type Segment,
} from "./event-filter.ts";
import { dataPathProblem } from "./event-filter-fields.ts";
import { compileFilterRegex, type FilterRegex, REGEX_FLAGS } from "./event-filter-regex.ts";
import { sizeProblem } from "./event-filter-size.ts";

/** Operators that run code or expressions: refused by name, whatever their operand. */
const CODE_OPERATORS = ["$where", "$expr", "$function", "$accumulator", "$jsonSchema"];

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
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
