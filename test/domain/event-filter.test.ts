import { describe, expect, it } from "vitest";
import type { Envelope } from "../../src/domain/envelope.ts";
import type { EventType } from "../../src/domain/event-catalog.ts";
import { FILTER_LIMITS } from "../../src/domain/event-filter.ts";
import { compileFilter, filterIssues } from "../../src/domain/event-filter-compile.ts";
import { clauseMatches, explainMatch } from "../../src/domain/event-filter-match.ts";

const MESSAGE_ID = "6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10";

/** A message event whose metadata holds every JSON type, arrays and nesting. */
const envelope: Envelope = {
  id: "evt_00000000000000000000000000000001",
  type: "message.bounced",
  version: "1",
  occurred_at: "2026-11-21T10:00:00.500Z",
  tenant_id: "11111111-1111-4111-8111-111111111111",
  project_id: "22222222-2222-4222-8222-222222222222",
  resource_id: MESSAGE_ID,
  data: {
    message_id: MESSAGE_ID,
    status: "bounced",
    channel: "email",
    message_type: "marketing",
    recipient: "ada@example.com",
    reason: "Mailbox full",
    metadata: {
      attempts: 3,
      ratio: 0.25,
      vip: false,
      note: null,
      tags: ["a", "b", "ünï"],
      nested: { level: { deep: "yes" } },
      items: [{ sku: "x1", qty: 2 }, { sku: "x2", qty: 5 }, "loose"],
      matrix: [
        [1, 2],
        [3, 4],
      ],
      "10": "ten",
      empty: [],
    },
  },
};

const ALL_TYPES = ["message.bounced", "message.delivered", "domain.verified"] as EventType[];

function matches(filter: unknown, env: object = envelope): boolean {
  const compiled = compileFilter(filter);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues));
  const verdict = explainMatch(compiled.clause, env);
  // The fan-out's quick path and the explaining path always agree.
  expect(clauseMatches(compiled.clause, env)).toBe(verdict.matches);
  expect(verdict.reasons.length === 0).toBe(verdict.matches);
  return verdict.matches;
}

const issues = (filter: unknown, events: readonly EventType[] | undefined = ALL_TYPES) =>
  filterIssues(filter, { events });

const explain = (filter: unknown) => {
  const compiled = compileFilter(filter);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues));
  return explainMatch(compiled.clause, envelope);
};

describe("payload filters: matching", () => {
  it("an empty filter matches everything", () => {
    expect(matches({})).toBe(true);
  });

  it("$eq, and a bare value as $eq, with strict types", () => {
    expect(matches({ "data.status": "bounced" })).toBe(true);
    expect(matches({ "data.status": { $eq: "bounced" } })).toBe(true);
    expect(matches({ "data.status": "Bounced" })).toBe(false);
    expect(matches({ type: "message.bounced", resource_id: MESSAGE_ID })).toBe(true);
    expect(matches({ "data.metadata.attempts": 3 })).toBe(true);
    expect(matches({ "data.metadata.attempts": 3.0 })).toBe(true);
    expect(matches({ "data.metadata.attempts": "3" })).toBe(false);
    expect(matches({ "data.metadata.vip": false })).toBe(true);
    expect(matches({ "data.metadata.vip": 0 })).toBe(false);
    expect(matches({ "data.metadata.vip": null })).toBe(false);
  });

  it("null equals null and missing; $ne null requires a present, non-null value", () => {
    expect(matches({ "data.metadata.note": null })).toBe(true);
    expect(matches({ "data.metadata.absent": null })).toBe(true);
    expect(matches({ "data.metadata.attempts": null })).toBe(false);
    expect(matches({ "data.metadata.note": { $ne: null } })).toBe(false);
    expect(matches({ "data.metadata.absent": { $ne: null } })).toBe(false);
    expect(matches({ "data.metadata.attempts": { $ne: null } })).toBe(true);
  });

  it("objects and arrays equal by value; object keys in any order, array items in order", () => {
    expect(matches({ "data.metadata.nested": { level: { deep: "yes" } } })).toBe(true);
    expect(matches({ "data.metadata.nested": { level: { deep: "no" } } })).toBe(false);
    expect(matches({ "data.metadata.nested": { level: { deep: "yes", more: 1 } } })).toBe(false);
    expect(matches({ "data.metadata.items.0": { qty: 2, sku: "x1" } })).toBe(true);
    expect(matches({ "data.metadata.tags": ["a", "b", "ünï"] })).toBe(true);
    expect(matches({ "data.metadata.tags": ["b", "a", "ünï"] })).toBe(false);
    expect(matches({ "data.metadata.empty": [] })).toBe(true);
    expect(matches({ "data.metadata": {} })).toBe(false);
  });

  it("$ne matches a missing field and a different value", () => {
    expect(matches({ "data.status": { $ne: "delivered" } })).toBe(true);
    expect(matches({ "data.status": { $ne: "bounced" } })).toBe(false);
    expect(matches({ "data.metadata.absent": { $ne: "x" } })).toBe(true);
    expect(matches({ "data.metadata.attempts": { $ne: "3" } })).toBe(true);
  });

  it("$in and $nin, null in them standing for missing too, empty lists", () => {
    expect(matches({ "data.channel": { $in: ["sms", "email"] } })).toBe(true);
    expect(matches({ "data.channel": { $in: ["sms", "push"] } })).toBe(false);
    expect(matches({ "data.channel": { $in: [] } })).toBe(false);
    expect(matches({ "data.channel": { $nin: [] } })).toBe(true);
    expect(matches({ "data.channel": { $nin: ["sms", "push"] } })).toBe(true);
    expect(matches({ "data.channel": { $nin: ["email"] } })).toBe(false);
    expect(matches({ "data.metadata.absent": { $in: [null, "x"] } })).toBe(true);
    expect(matches({ "data.metadata.absent": { $nin: [null] } })).toBe(false);
    expect(matches({ "data.metadata.attempts": { $in: ["3", 4] } })).toBe(false);
  });

  it("$gt $gte $lt $lte on numbers", () => {
    expect(matches({ "data.metadata.attempts": { $gt: 2 } })).toBe(true);
    expect(matches({ "data.metadata.attempts": { $gt: 3 } })).toBe(false);
    expect(matches({ "data.metadata.attempts": { $gte: 3 } })).toBe(true);
    expect(matches({ "data.metadata.attempts": { $lt: 3 } })).toBe(false);
    expect(matches({ "data.metadata.attempts": { $lte: 3 } })).toBe(true);
    expect(matches({ "data.metadata.ratio": { $gt: 0.2, $lt: 0.3 } })).toBe(true);
    expect(matches({ "data.metadata.ratio": { $gt: 0.2, $lt: 0.25 } })).toBe(false);
  });

  it("ranges compare only values of the same type: never a number with a string, nor booleans or null", () => {
    expect(matches({ "data.metadata.attempts": { $gt: "1" } })).toBe(false);
    expect(matches({ "data.metadata.attempts": { $lt: "9" } })).toBe(false);
    expect(matches({ "data.status": { $gt: 1 } })).toBe(false);
    expect(matches({ "data.metadata.note": { $lt: 1 } })).toBe(false);
    expect(matches({ "data.metadata.vip": { $lt: 1 } })).toBe(false);
    expect(matches({ "data.metadata.absent": { $gte: 0 } })).toBe(false);
  });

  it("strings compare in code-point order (UTF-8 byte order), case-sensitively", () => {
    expect(matches({ "data.status": { $gt: "a", $lt: "c" } })).toBe(true);
    expect(matches({ "data.status": { $gt: "bounced" } })).toBe(false);
    expect(matches({ "data.status": { $gte: "bounced" } })).toBe(true);
    expect(matches({ "data.status": { $lt: "B" } })).toBe(false);
    // U+FF5E is above every UTF-16 surrogate but below U+1F600: code points say "less", UTF-16 units would not.
    const emoji = { ...envelope, data: { ...envelope.data, reason: "\u{1F600}" } };
    expect(matches({ "data.reason": { $gt: "\uFF5E" } }, emoji)).toBe(true);
  });

  it("occurred_at compares as an instant, whatever the timestamp's spelling", () => {
    expect(matches({ occurred_at: { $gt: "2026-11-21T10:00:00Z" } })).toBe(true);
    expect(matches({ occurred_at: { $gt: "2026-11-21T10:00:00.600Z" } })).toBe(false);
    expect(matches({ occurred_at: { $lt: "2026-11-21T11:00:00.500+01:00" } })).toBe(false);
    expect(matches({ occurred_at: { $lt: "2026-11-21T11:00:00.501+01:00" } })).toBe(true);
    expect(matches({ occurred_at: { $lte: "2026-11-21T11:00:00.500+01:00" } })).toBe(true);
    expect(matches({ occurred_at: "2026-11-21T11:00:00.5+01:00" })).toBe(true);
    expect(matches({ occurred_at: { $in: ["2026-11-21T10:00:00.500Z"] } })).toBe(true);
    expect(matches({ occurred_at: { $ne: "2026-11-21T10:00:00.500Z" } })).toBe(false);
    expect(matches({ occurred_at: { $gte: "2026-11-21", $lt: "2026-11-22" } })).toBe(true);
  });

  it("$exists: present (even when null) or absent", () => {
    expect(matches({ "data.reason": { $exists: true } })).toBe(true);
    expect(matches({ "data.metadata.note": { $exists: true } })).toBe(true);
    expect(matches({ "data.metadata.absent": { $exists: true } })).toBe(false);
    expect(matches({ "data.metadata.absent": { $exists: false } })).toBe(true);
    expect(matches({ "data.reason": { $exists: false } })).toBe(false);
    expect(matches({ "data.metadata.nested.level.deep": { $exists: true } })).toBe(true);
    expect(matches({ "data.metadata.nested.level.deep.more": { $exists: true } })).toBe(false);
  });

  it("$regex with $options, only on strings", () => {
    expect(matches({ "data.recipient": { $regex: "@example\\.com$" } })).toBe(true);
    expect(matches({ "data.recipient": { $regex: "@EXAMPLE\\.COM$" } })).toBe(false);
    expect(matches({ "data.recipient": { $regex: "@EXAMPLE\\.COM$", $options: "i" } })).toBe(true);
    expect(matches({ "data.reason": { $regex: "mailbox" } })).toBe(false);
    expect(matches({ "data.reason": { $regex: "^mailbox", $options: "i" } })).toBe(true);
    expect(matches({ "data.metadata.attempts": { $regex: "3" } })).toBe(false);
    expect(matches({ "data.metadata.absent": { $regex: "" } })).toBe(false);
    expect(matches({ "data.metadata.tags": { $regex: "^ü" } })).toBe(true);
  });

  it("$not negates a field's condition, and matches a missing field", () => {
    expect(matches({ "data.status": { $not: { $in: ["bounced", "failed"] } } })).toBe(false);
    expect(matches({ "data.status": { $not: { $in: ["sent"] } } })).toBe(true);
    expect(matches({ "data.metadata.attempts": { $not: { $gt: 5 } } })).toBe(true);
    expect(matches({ "data.metadata.absent": { $not: { $gt: 5 } } })).toBe(true);
    expect(matches({ "data.recipient": { $not: { $regex: "example", $options: "i" } } })).toBe(false);
    // Several operators inside $not: the negation of all of them together.
    expect(matches({ "data.metadata.attempts": { $not: { $gt: 1, $lt: 5 } } })).toBe(false);
    expect(matches({ "data.metadata.attempts": { $not: { $gt: 1, $lt: 3 } } })).toBe(true);
    expect(matches({ "data.status": { $not: { $not: { $eq: "bounced" } } } })).toBe(true);
  });

  it("several operators on one field must all hold; several fields too", () => {
    expect(matches({ "data.metadata.attempts": { $gte: 1, $ne: 3 } })).toBe(false);
    expect(matches({ "data.channel": "email", "data.message_type": "marketing" })).toBe(true);
    expect(matches({ "data.channel": "email", "data.message_type": "transactional" })).toBe(false);
  });

  it("$and, $or and $nor, nested", () => {
    expect(matches({ $and: [{ "data.channel": "email" }, { type: "message.bounced" }] })).toBe(true);
    expect(matches({ $and: [{ "data.channel": "email" }, { type: "message.sent" }] })).toBe(false);
    expect(matches({ $or: [{ "data.channel": "sms" }, { type: "message.bounced" }] })).toBe(true);
    expect(matches({ $or: [{ "data.channel": "sms" }, { type: "message.sent" }] })).toBe(false);
    expect(matches({ $nor: [{ "data.channel": "sms" }, { type: "message.sent" }] })).toBe(true);
    expect(matches({ $nor: [{ "data.channel": "sms" }, { type: "message.bounced" }] })).toBe(false);
    expect(
      matches({
        $or: [
          { $and: [{ "data.channel": "sms" }, { "data.status": "bounced" }] },
          { $nor: [{ "data.message_type": "transactional" }] },
        ],
        "data.metadata.attempts": { $lte: 3 },
      }),
    ).toBe(true);
  });

  it("paths reach into arrays: any item matches, an index picks one, objects in arrays by field", () => {
    expect(matches({ "data.metadata.tags": "b" })).toBe(true);
    expect(matches({ "data.metadata.tags": { $in: ["z", "a"] } })).toBe(true);
    expect(matches({ "data.metadata.tags": { $nin: ["a"] } })).toBe(false);
    expect(matches({ "data.metadata.tags.1": "b" })).toBe(true);
    expect(matches({ "data.metadata.tags.0": "b" })).toBe(false);
    expect(matches({ "data.metadata.tags.9": { $exists: true } })).toBe(false);
    expect(matches({ "data.metadata.items.sku": "x2" })).toBe(true);
    expect(matches({ "data.metadata.items.qty": { $gt: 4 } })).toBe(true);
    expect(matches({ "data.metadata.items.qty": { $gt: 5 } })).toBe(false);
    expect(matches({ "data.metadata.items.1.sku": "x2" })).toBe(true);
    expect(matches({ "data.metadata.items.price": { $exists: true } })).toBe(false);
    expect(matches({ "data.metadata.matrix": [3, 4] })).toBe(true);
    expect(matches({ "data.metadata.matrix.1": [3, 4] })).toBe(true);
    expect(matches({ "data.metadata.matrix": 3 })).toBe(false);
    expect(matches({ "data.metadata.empty": { $exists: true } })).toBe(true);
    expect(matches({ "data.metadata.empty": { $in: ["x"] } })).toBe(false);
    expect(matches({ "data.metadata.10": "ten" })).toBe(true);
  });

  it("never reads inherited properties (__proto__, constructor)", () => {
    expect(matches({ "data.metadata.constructor": { $exists: true } })).toBe(false);
    expect(matches({ "data.__proto__": { $exists: true } })).toBe(false);
    expect(matches({ "data.metadata.toString": null })).toBe(true);
  });
});

describe("payload filters: why not", () => {
  it("names every failed clause by its path in the filter, with what was found", () => {
    expect(
      explain({
        "data.status": { $in: ["delivered", "sent"] },
        "data.channel": "email",
        type: "message.sent",
      }),
    ).toEqual({
      matches: false,
      reasons: [
        {
          path: "filter.data.status.$in",
          message: 'data.status is "bounced"; expected one of ["delivered","sent"]',
        },
        { path: "filter.type", message: 'type is "message.bounced"; expected equal to "message.sent"' },
      ],
    });
  });

  it("says what is missing, and what a $not, $regex or $exists wanted", () => {
    expect(explain({ "data.metadata.absent": { $gt: 1 } }).reasons).toEqual([
      {
        path: "filter.data.metadata.absent.$gt",
        message: "data.metadata.absent is missing; expected greater than 1",
      },
    ]);
    expect(explain({ "data.status": { $not: { $eq: "bounced" } } }).reasons).toEqual([
      {
        path: "filter.data.status.$not",
        message: 'data.status is "bounced"; expected not (equal to "bounced")',
      },
    ]);
    expect(
      explain({ "data.reason": { $regex: "^x", $options: "i" }, "data.reason.x": { $exists: true } }).reasons,
    ).toEqual([
      {
        path: "filter.data.reason.$regex",
        message: 'data.reason is "Mailbox full"; expected a string matching /^x/i',
      },
      { path: "filter.data.reason.x.$exists", message: "data.reason.x is missing; expected present" },
    ]);
    expect(explain({ "data.metadata.items.qty": 3 }).reasons).toEqual([
      {
        path: "filter.data.metadata.items.qty",
        message: "data.metadata.items.qty is [2,5] (through an array); expected equal to 3",
      },
    ]);
  });

  it("explains an $or by each of its failed branches, and a $nor by the clause that matched", () => {
    expect(
      explain({ $or: [{ "data.channel": "sms" }, { $and: [{ type: "message.sent" }] }] }).reasons,
    ).toEqual([
      { path: "filter.$or", message: "none of its 2 clauses matched" },
      { path: "filter.$or.0.data.channel", message: 'data.channel is "email"; expected equal to "sms"' },
      {
        path: "filter.$or.1.$and.0.type",
        message: 'type is "message.bounced"; expected equal to "message.sent"',
      },
    ]);
    expect(explain({ $nor: [{ "data.channel": "sms" }, { "data.channel": "email" }] }).reasons).toEqual([
      { path: "filter.$nor.1", message: "matched, and $nor requires that none of its clauses match" },
    ]);
  });

  it("shortens long values", () => {
    const reason = explain({ "data.metadata": { tags: [] } }).reasons[0]!;
    expect(reason.message).toMatch(/^data\.metadata is \{.{70,}\.\.\.; expected equal to \{"tags":\[\]\}$/);
  });
});

describe("payload filters: refused when set", () => {
  const paths = (filter: unknown, events?: readonly EventType[]) => issues(filter, events).map((i) => i.path);

  it("accepts what the matching tests use, and says nothing", () => {
    expect(
      issues({
        "data.status": { $in: ["bounced"] },
        $or: [{ type: "message.sent" }, { resource_id: MESSAGE_ID }],
      }),
    ).toEqual([]);
    expect(issues({})).toEqual([]);
  });

  it("refuses operators that run code or expressions, and unknown ones, wherever they are", () => {
    for (const op of ["$where", "$expr", "$function", "$accumulator", "$jsonSchema"]) {
      expect(issues({ [op]: "sleep(1000)" })).toEqual([
        { path: `filter.${op}`, message: `is not allowed: a filter cannot run code or expressions (${op})` },
      ]);
      expect(paths({ "data.status": { [op]: "x" } })).toEqual([`filter.data.status.${op}`]);
      expect(paths({ $or: [{ [op]: "x" }] })).toEqual([`filter.$or.0.${op}`]);
    }
    for (const op of ["$elemMatch", "$size", "$all", "$mod", "$type", "$text", "$comment", "$bogus"]) {
      expect(issues({ "data.status": { [op]: 1 } })[0]?.message).toMatch(
        /^is not a supported operator here; use one of \$eq, /,
      );
      expect(issues({ [op]: 1 })[0]?.message).toMatch(
        /^is not a supported operator here; use one of \$and, \$or, \$nor$/,
      );
    }
  });

  it("says where an operator belongs when it is in the wrong place", () => {
    expect(issues({ $in: ["a"] })[0]).toEqual({
      path: "filter.$in",
      message: 'applies to a field: write {"data.status": {"$in": ...}}',
    });
    expect(issues({ $not: { type: "message.sent" } })[0]?.message).toMatch(/use \$nor$/);
    expect(issues({ "data.status": { $or: [] } })[0]).toMatchObject({ path: "filter.data.status.$or" });
    expect(issues({ "data.status": { $options: "i" } })).toEqual([
      { path: "filter.data.status.$options", message: "applies only beside $regex" },
    ]);
  });

  it("checks every operand's type", () => {
    expect(paths({ $and: {} })).toEqual(["filter.$and"]);
    expect(paths({ $or: [] })).toEqual(["filter.$or"]);
    expect(paths({ $nor: ["x"] })).toEqual(["filter.$nor.0"]);
    expect(paths({ "data.status": { $in: "bounced" } })).toEqual(["filter.data.status.$in"]);
    expect(paths({ "data.status": { $nin: { a: 1 } } })).toEqual(["filter.data.status.$nin"]);
    expect(paths({ "data.status": { $gt: true } })).toEqual(["filter.data.status.$gt"]);
    expect(paths({ "data.status": { $lte: null } })).toEqual(["filter.data.status.$lte"]);
    expect(paths({ "data.status": { $lt: [1] } })).toEqual(["filter.data.status.$lt"]);
    expect(paths({ "data.status": { $exists: 1 } })).toEqual(["filter.data.status.$exists"]);
    expect(paths({ "data.status": { $regex: 5 } })).toEqual(["filter.data.status.$regex"]);
    expect(paths({ "data.status": { $regex: "a", $options: 1 } })).toEqual(["filter.data.status.$options"]);
    expect(paths({ "data.status": { $not: "bounced" } })).toEqual(["filter.data.status.$not"]);
    expect(paths({ "data.status": { $not: {} } })).toEqual(["filter.data.status.$not"]);
    expect(paths({ "data.status": { $not: { a: 1 } } })).toEqual(["filter.data.status.$not"]);
    expect(paths({ "data.status": { $not: { $gt: true } } })).toEqual(["filter.data.status.$not.$gt"]);
    expect(paths({ "data.status": { $eq: "a", x: 1 } })).toEqual(["filter.data.status"]);
    expect(paths([])).toEqual(["filter"]);
    expect(paths("x")).toEqual(["filter"]);
    expect(paths(null)).toEqual(["filter"]);
  });

  it("compares occurred_at only with timestamps", () => {
    expect(paths({ occurred_at: "yesterday" })).toEqual(["filter.occurred_at"]);
    expect(paths({ occurred_at: { $gt: 5 } })).toEqual(["filter.occurred_at.$gt"]);
    expect(paths({ occurred_at: { $gt: "2026-11-21T10:00:00" } })).toEqual(["filter.occurred_at.$gt"]);
    expect(paths({ occurred_at: { $in: ["2026-11-21T10:00:00Z", "soon"] } })).toEqual([
      "filter.occurred_at.$in",
    ]);
    expect(paths({ occurred_at: { $ne: "2026-13-45T10:00:00Z" } })).toEqual(["filter.occurred_at.$ne"]);
    expect(paths({ occurred_at: { $exists: true, $lt: "2026-11-21T10:00:00+02:00" } })).toEqual([]);
  });

  it("names only envelope fields it can filter on, by well-formed paths", () => {
    for (const field of ["id", "version", "tenant_id", "project_id", "payload", "Type"]) {
      expect(issues({ [field]: "x" })[0]).toEqual({
        path: `filter.${field}`,
        message: "is not a field a filter can name; use type, resource_id, occurred_at or data.<field>",
      });
    }
    expect(issues({ "type.x": "a" })[0]?.message).toBe("is not a field path: type has no fields");
    expect(issues({ "data..status": "a" })[0]?.message).toBe("is not a field path: it has an empty part");
    expect(issues({ "data.": "a" })[0]?.message).toBe("is not a field path: it has an empty part");
    expect(issues({ "data.$status": "a" })[0]?.message).toBe("is not a field path: a part starts with $");
    expect(issues({ "": "a" })[0]?.path).toBe("filter.");
  });

  it("refuses data paths that no subscribed event type has (a typo would drop every event)", () => {
    const messageOnly: EventType[] = ["message.delivered"];
    expect(issues({ "data.statsu": "x" }, messageOnly)).toEqual([
      {
        path: "filter.data.statsu",
        message:
          "is not a data field of the endpoint's event types; their data has message_id, status, channel, message_type, recipient, reason, metadata",
      },
    ]);
    expect(issues({ "data.domain": "x" }, messageOnly)[0]?.path).toBe("filter.data.domain");
    expect(issues({ "data.domain": "x" }, ["message.delivered", "domain.verified"])).toEqual([]);
    expect(issues({ "data.status.code": 1 }, messageOnly)[0]?.message).toBe(
      "is not a path in the data of the endpoint's event types: data.status has no such field",
    );
    // Free-form metadata may hold anything; arrays of records are looked through, by index or not.
    expect(issues({ "data.metadata.any.thing": 1 }, messageOnly)).toEqual([]);
    expect(issues({ "data.dns_records.valid": false }, ["domain.verified"])).toEqual([]);
    expect(issues({ "data.dns_records.0.name": "x" }, ["domain.verified"])).toEqual([]);
    expect(issues({ "data.dns_records.ttl": 1 }, ["domain.verified"])[0]?.path).toBe(
      "filter.data.dns_records.ttl",
    );
    expect(issues({ data: { $exists: true } }, messageOnly)).toEqual([]);
    // Without a context (fan-out, a filter stored earlier), any data path compiles.
    expect(filterIssues({ "data.statsu": "x" }, {})).toEqual([]);
  });

  it("lists every problem at once", () => {
    expect(
      paths({ $where: "1", "data.x": { $gt: true }, id: 1, "data.status": { $regex: "(" } }, [
        "message.sent",
      ]),
    ).toEqual(["filter.$where", "filter.data.x", "filter.id", "filter.data.status.$regex"]);
  });

  it("checks regular expressions: syntax, backtracking constructs, flags, length, count", () => {
    expect(issues({ "data.reason": { $regex: "(a+)\\1" } })).toEqual([
      { path: "filter.data.reason.$regex", message: "uses a backreference, which is not supported" },
    ]);
    expect(paths({ "data.reason": { $regex: "(?=x)" } })).toEqual(["filter.data.reason.$regex"]);
    expect(issues({ "data.reason": { $regex: "a", $options: "ix" } })).toEqual([
      { path: "filter.data.reason.$options", message: 'has an unsupported flag "x" (use i, m, s)' },
    ]);
    expect(issues({ "data.reason": { $regex: "a".repeat(257) } })[0]?.message).toBe(
      "must be at most 256 characters long",
    );
    const many = Object.fromEntries(
      Array.from({ length: FILTER_LIMITS.maxRegexes + 1 }, (_, i) => [
        `data.metadata.f${i}`,
        { $regex: "a" },
      ]),
    );
    expect(issues(many)).toEqual([
      {
        path: `filter.data.metadata.f${FILTER_LIMITS.maxRegexes}.$regex`,
        message: "is one $regex too many: a filter may hold at most 8",
      },
    ]);
  });

  it("limits size, depth, members and string length", () => {
    const deep = (levels: number): unknown =>
      levels === 0 ? { type: "message.sent" } : { $or: [deep(levels - 1)] };
    // $or + its array make two levels each; the filter object is level 1.
    expect(issues(deep(4))).toEqual([]);
    const tooDeep = issues(deep(5));
    expect(tooDeep).toHaveLength(1);
    expect(tooDeep[0]?.message).toBe("nests too deeply: a filter may nest at most 10 levels");
    expect(tooDeep[0]?.path).toBe("filter.$or.0.$or.0.$or.0.$or.0.$or.0");

    const wide = {
      "data.status": { $in: Array.from({ length: FILTER_LIMITS.maxMembers }, (_, i) => `s${i}`) },
    };
    expect(issues(wide)).toEqual([
      { path: "filter", message: "must hold at most 200 keys and array items in all" },
    ]);

    const big = { "data.metadata.note": { $in: Array.from({ length: 5 }, () => "y".repeat(1000)) } };
    expect(issues(big)).toEqual([{ path: "filter", message: "must be at most 4096 bytes as JSON" }]);

    expect(issues({ "data.reason": "z".repeat(1025) })).toEqual([
      { path: "filter.data.reason", message: "must be at most 1024 characters long" },
    ]);
    expect(issues({ [`data.metadata.${"k".repeat(1020)}`]: 1 })).toEqual([
      { path: "filter", message: "has a key longer than 1024 characters" },
    ]);
    // A nest far past the limit is refused without walking it all (no stack overflow).
    let nest: unknown = 1;
    for (let i = 0; i < 100_000; i++) nest = [nest];
    expect(issues({ "data.metadata.x": nest })).toEqual([
      {
        path: "filter.data.metadata.x.0.0.0.0.0.0.0.0.0",
        message: "nests too deeply: a filter may nest at most 10 levels",
      },
    ]);
  });
});
