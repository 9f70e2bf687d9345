import { describe, expect, it } from "vitest";
import { compileFilter, filterIssues } from "../../src/domain/event-filter-compile.ts";
import { clauseMatches, explainMatch } from "../../src/domain/event-filter-match.ts";

// Where payload filters follow MongoDB's documented semantics (docs/adr/0014-payload-filters.md), the
// cases of MongoDB's own tests, ported: jstests/core/null_query_semantics.js, null2.js and
// match_numeric_components.js. Each document sits at data.metadata (free-form JSON), so a path `a.b`
// there is `data.metadata.a.b` here. JSON has no `undefined`: the documents holding it are left out.

/** An envelope whose data.metadata is the document. */
const envelopeOf = (doc: object) => ({
  id: "evt_00000000000000000000000000000001",
  type: "message.bounced",
  occurred_at: "2026-11-21T10:00:00.000Z",
  resource_id: "6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10",
  data: { metadata: doc },
});

/** The filter with every field path moved below data.metadata, recursively through $and/$or/$nor. */
function prefixed(filter: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(filter).map(([key, value]) =>
      key.startsWith("$")
        ? [key, (value as Record<string, unknown>[]).map(prefixed)]
        : [`data.metadata.${key}`, value],
    ),
  );
}

function matches(filter: Record<string, unknown>, doc: object): boolean {
  const compiled = compileFilter(prefixed(filter));
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues));
  const envelope = envelopeOf(doc);
  const verdict = explainMatch(compiled.clause, envelope);
  // The fan-out's quick path and the explaining path always agree.
  expect(clauseMatches(compiled.clause, envelope), JSON.stringify(filter)).toBe(verdict.matches);
  return verdict.matches;
}

/** The ids of the documents the filter matches, sorted. */
const matching = <Id extends string | number>(filter: Record<string, unknown>, docs: Record<Id, object>) =>
  (Object.entries(docs) as [string, object][])
    .filter(([, doc]) => matches(filter, doc))
    .map(([id]) => id)
    .sort();
const sorted = (ids: readonly (string | number)[]) => ids.map(String).sort();

describe("null, missing and arrays (MongoDB's null_query_semantics.js)", () => {
  const WITHOUT_ARRAYS = {
    a_empty_subobject: { a: {} },
    a_null: { a: null },
    a_number: { a: 4 },
    a_subobject_b_not_null: { a: { b: "hi" } },
    a_subobject_b_null: { a: { b: null } },
    no_a: {},
  };
  const DOCS = {
    ...WITHOUT_ARRAYS,
    a_double_array: { a: [[]] },
    a_empty_array: { a: [] },
    a_object_array_all_b_nulls: { a: [{ b: null }, { b: null }, {}] },
    a_object_array_no_b_nulls: { a: [{ b: 1 }, { b: 3 }, { b: "string" }] },
    a_object_array_some_b_nulls: { a: [{ b: null }, { b: 3 }, { b: null }] },
    a_object_array_some_b_missing: { a: [{ b: 3 }, {}] },
    a_value_array_all_nulls: { a: [null, null] },
    a_value_array_no_nulls: { a: [1, "string", 4] },
    a_value_array_with_null: { a: [1, "string", null, 4] },
  };
  const A_NULL = ["a_null", "no_a", "a_value_array_all_nulls", "a_value_array_with_null"];
  const A_NOT_NULL = Object.keys(DOCS).filter((id) => !A_NULL.includes(id));
  // "a.b" is null for: a non-object, non-array a; an object a whose b is missing or null; an array a
  // holding at least one object whose b is missing or null. Scalars in an array count for nothing.
  const AB_NULL = [
    "a_empty_subobject",
    "a_null",
    "a_number",
    "a_subobject_b_null",
    "no_a",
    "a_object_array_all_b_nulls",
    "a_object_array_some_b_nulls",
    "a_object_array_some_b_missing",
  ];
  const AB_NOT_NULL = [
    "a_subobject_b_not_null",
    "a_double_array",
    "a_empty_array",
    "a_object_array_no_b_nulls",
    "a_value_array_all_nulls",
    "a_value_array_no_nulls",
    "a_value_array_with_null",
  ];

  it("{a: null} and its negations", () => {
    expect(matching({ a: { $eq: null } }, DOCS)).toEqual(sorted(A_NULL));
    expect(matching({ a: { $ne: null } }, DOCS)).toEqual(sorted(A_NOT_NULL));
    expect(matching({ a: { $in: [null, 75] } }, DOCS)).toEqual(sorted(A_NULL));
    expect(matching({ $or: [{ a: null }, { a: 75 }] }, DOCS)).toEqual(sorted(A_NULL));
    expect(matching({ a: { $nin: [null, 75] } }, DOCS)).toEqual(sorted(A_NOT_NULL));
    expect(matching({ $nor: [{ a: null }] }, DOCS)).toEqual(sorted(A_NOT_NULL));
    expect(matching({ a: { $exists: false } }, DOCS)).toEqual(["no_a"]);
  });

  it('{"a.b": null} through objects, scalars and arrays, and its negations', () => {
    expect(matching({ "a.b": { $eq: null } }, DOCS)).toEqual(sorted(AB_NULL));
    expect(matching({ "a.b": null }, DOCS)).toEqual(sorted(AB_NULL));
    expect(matching({ "a.b": { $ne: null } }, DOCS)).toEqual(sorted(AB_NOT_NULL));
    expect(matching({ "a.b": { $in: [null, 75] } }, DOCS)).toEqual(sorted(AB_NULL));
    expect(matching({ $or: [{ "a.b": null }, { "a.b": 75 }] }, DOCS)).toEqual(sorted(AB_NULL));
    expect(matching({ "a.b": { $nin: [null, 75] } }, DOCS)).toEqual(sorted(AB_NOT_NULL));
    expect(matching({ $nor: [{ "a.b": null }] }, DOCS)).toEqual(sorted(AB_NOT_NULL));
    expect(matching({ "a.b": { $not: { $eq: null } } }, DOCS)).toEqual(sorted(AB_NOT_NULL));
    // MongoDB's {$nin: [null, /^str.*/]}, which filters write as a $nor of the two.
    expect(matching({ $nor: [{ "a.b": null }, { "a.b": { $regex: "^str.*" } }] }, DOCS)).toEqual(
      sorted(AB_NOT_NULL.filter((id) => id !== "a_object_array_no_b_nulls")),
    );
  });

  it('{"a.b": {$exists: false}} on documents without arrays', () => {
    expect(matching({ "a.b": { $exists: false } }, WITHOUT_ARRAYS)).toEqual(
      sorted(["no_a", "a_empty_subobject", "a_null", "a_number"]),
    );
  });

  it("an object in an array lacking the field counts as null (null2.js)", () => {
    const docs = {
      1: { a: [{ b: 5 }] },
      2: { a: [{}] },
      3: { a: [] },
      4: { a: [{}, { b: 5 }] },
      5: { a: [5, { b: 5 }] },
    };
    expect(matching({ "a.b": null }, docs)).toEqual(["2", "4"]);
    expect(matching({ "a.b": { $in: [null] } }, docs)).toEqual(["2", "4"]);
  });

  it("the cases where Herald departed from MongoDB, one by one", () => {
    for (const a of [[], [null, null], [1, "x", 4], [[]]]) {
      expect(matches({ "a.b": null }, { a }), JSON.stringify(a)).toBe(false);
      expect(matches({ "a.b": { $ne: null } }, { a }), JSON.stringify(a)).toBe(true);
      expect(matches({ "a.b": { $nin: [null] } }, { a }), JSON.stringify(a)).toBe(true);
      expect(matches({ $nor: [{ "a.b": null }] }, { a }), JSON.stringify(a)).toBe(true);
    }
    expect(matches({ "a.b": null }, { a: [{ b: 3 }, {}] })).toBe(true);
    expect(matches({ "a.b": { $ne: null } }, { a: [{ b: 3 }, {}] })).toBe(false);
    expect(matches({ "a.b": { $exists: true } }, { a: [{ b: 3 }, {}] })).toBe(true);
    expect(matches({ "a.0": 42 }, { a: [[42]] })).toBe(false);
    expect(matches({ "a.0": [42] }, { a: [[42]] })).toBe(true);
  });

  it("explains a failure through an array by the values found", () => {
    const compiled = compileFilter(prefixed({ "a.b": { $ne: null } }));
    if (!compiled.ok) throw new Error("did not compile");
    expect(explainMatch(compiled.clause, envelopeOf({ a: [{ b: 3 }, {}] })).reasons).toEqual([
      {
        path: "filter.data.metadata.a.b.$ne",
        message: "data.metadata.a.b is [3] (through an array); expected present and not null",
      },
    ]);
  });
});

describe("numeric path components (MongoDB's match_numeric_components.js)", () => {
  const DOCS: Record<number, object> = {
    0: { a: 42 },
    1: { a: [42] },
    2: { a: { "0": 42 } },
    3: { a: [[42]] },
    4: { a: [{ "0": 42 }] },
    5: { a: { "0": [42] } },
    6: { a: { "0": { "0": 42 } } },
    7: { a: [[[42]]] },
    8: { a: [[{ "0": 42 }]] },
    9: { a: [{ "0": [42] }] },
    10: { a: [{ "0": { "0": 42 } }] },
    11: { a: { "0": [[42]] } },
    12: { a: { "0": [{ "0": 42 }] } },
    13: { a: { "0": { "0": [42] } } },
    14: { a: { "0": { "0": { "0": 42 } } } },
    15: { a: [[[[42]]]] },
    16: { a: [[[{ "0": 42 }]]] },
    17: { a: [[{ "0": [42] }]] },
    18: { a: [[{ "0": { "0": 42 } }]] },
    19: { a: [{ "0": [[42]] }] },
    20: { a: [{ "0": [{ "0": 42 }] }] },
    21: { a: [{ "0": { "0": [42] } }] },
    22: { a: [{ "0": { "0": { "0": 42 } } }] },
    23: { a: { "0": [[[42]]] } },
    24: { a: { "0": [[{ "0": 42 }]] } },
    25: { a: { "0": [{ "0": [42] }] } },
    26: { a: { "0": [{ "0": { "0": 42 } }] } },
    27: { a: { "0": { "0": [[42]] } } },
    28: { a: { "0": { "0": [{ "0": 42 }] } } },
    29: { a: { "0": { "0": { "0": [42] } } } },
    30: { a: { "0": { "0": { "0": { "0": 42 } } } } },
  };
  const A0 = [1, 2, 4, 5, 9];
  const NOT_A0 = Object.keys(DOCS)
    .map(Number)
    .filter((id) => !A0.includes(id));

  it('"a.0" picks the first item of an array or the field "0", and looks no deeper', () => {
    expect(matching({ "a.0": 42 }, DOCS)).toEqual(sorted(A0));
    expect(matching({ "a.0": { $ne: 42 } }, DOCS)).toEqual(sorted(NOT_A0));
    expect(matching({ "a.0": { $gt: 41 } }, DOCS)).toEqual(sorted(A0));
    expect(matching({ "a.0": { $in: [41, 42, 43] } }, DOCS)).toEqual(sorted(A0));
    expect(matching({ "a.0": { $nin: [41, 42, 43] } }, DOCS)).toEqual(sorted(NOT_A0));
    expect(matching({ $or: [{ "a.0": 42 }, { notARealField: 123 }] }, DOCS)).toEqual(sorted(A0));
  });

  it('"a.0.0" through arrays and objects alike', () => {
    expect(matching({ "a.0.0": 42 }, DOCS)).toEqual(sorted([3, 4, 5, 6, 8, 9, 10, 12, 13, 17, 20, 21, 25]));
  });

  it("a $regex on a numeric component", () => {
    const docs = { 1: { b: "hello" }, 2: { b: { "0": "hello" } }, 3: { b: ["hello", "abc", "abc"] } };
    expect(matching({ "b.0": { $regex: "hello" } }, docs)).toEqual(["2", "3"]);
  });
});

describe("occurred_at: a day that does not exist is refused, as a month that does not is", () => {
  const paths = (filter: unknown) => filterIssues(filter, {}).map((i) => i.path);

  it.each([
    "2026-02-30T00:00:00Z",
    "2026-04-31",
    "2026-02-29",
    "2100-02-29T00:00:00Z",
    "2026-13-01",
    "2026-00-10",
    "2026-01-00",
    "2026-01-01T24:00:00Z",
    "2026-01-01T23:60:00Z",
    "2026-01-01T23:59:60Z",
    "2026-01-01T10:00:00+24:00",
  ])("%s", (timestamp) => {
    expect(paths({ occurred_at: timestamp })).toEqual(["filter.occurred_at"]);
    expect(paths({ occurred_at: { $gte: timestamp } })).toEqual(["filter.occurred_at.$gte"]);
    expect(paths({ occurred_at: { $in: [timestamp] } })).toEqual(["filter.occurred_at.$in"]);
  });

  it.each(["2028-02-29", "2000-02-29T12:00:00Z", "2026-04-30T23:59:59.999Z", "2026-12-31T00:00:00-23:59"])(
    "%s is a real instant",
    (timestamp) => {
      expect(paths({ occurred_at: { $lt: timestamp } })).toEqual([]);
    },
  );
});
