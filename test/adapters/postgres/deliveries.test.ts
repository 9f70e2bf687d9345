import type { Sql } from "postgres";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openPostgres } from "../../../src/adapters/postgres/connection.ts";
import { PostgresDeliveries } from "../../../src/adapters/postgres/deliveries.ts";
import { migrate } from "../../../src/adapters/postgres/migrate.ts";
import type { AttemptResult } from "../../../src/app/ports/deliveries.ts";
import type { Delivery } from "../../../src/domain/delivery.ts";
import { shardOf } from "../../../src/domain/shards.ts";
import { aDelivery, at, newScope, uuid } from "../../app/ports/fixtures.ts";
import { type FreshPostgres, freshPostgresDatabase, tracedPostgres } from "../../support/postgres.ts";

// What the PostgreSQL deliveries owe beyond the shared contract: a batch of results is one atomic
// statement, due work is read from the partial index, and retention deletes in bounded batches.

let db: FreshPostgres;
let sql: Sql;
/** Every statement the adapter sent, with its parameters (postgres.js's debug hook). */
const sent: { query: string; parameters: unknown[] }[] = [];
let traced: Sql;

beforeAll(async () => {
  db = await freshPostgresDatabase("herald_test_pg_deliveries");
  sql = openPostgres(db.url, db.options);
  await migrate(sql);
  traced = await tracedPostgres(db, (query, parameters) => sent.push({ query, parameters }));
});
afterAll(async () => {
  await traced?.end({ timeout: 5 });
  await sql?.end({ timeout: 5 });
  await db?.cleanup();
});
beforeEach(async () => {
  await sql`TRUNCATE deliveries`;
  sent.length = 0;
});

const statuses = async (ids: readonly string[]) =>
  new Map(
    (
      await sql<
        { id: string; status: string }[]
      >`SELECT id, status FROM deliveries WHERE id = ANY(${sql.array([...ids], 25)}::text[])`
    ).map((r) => [r.id, r.status]),
  );

/** The scans of `deliveries` in an EXPLAIN (FORMAT JSON) answer, wherever they are in the plan. */
function deliveriesScans(explained: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const walk = (node: Record<string, unknown>) => {
    if (node["Relation Name"] === "deliveries" && String(node["Node Type"]).endsWith("Scan")) out.push(node);
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  for (const top of explained as { Plan: Record<string, unknown> }[]) walk(top.Plan);
  return out;
}

function failedWith(d: Delivery, next: Delivery | null, responseBody: string): AttemptResult {
  return {
    id: d.id,
    status: "failed",
    responseStatus: 500,
    responseBody,
    error: "http_status",
    durationMs: 10,
    attemptedAt: at(10),
    nextAttemptAt: next?.scheduledAt ?? null,
    next,
  };
}

describe("record", () => {
  it("is all or nothing: when one result's write fails, no result and no follow-up of the batch is written", async () => {
    const store = new PostgresDeliveries(sql);
    const scope = newScope();
    const [a, b] = [aDelivery(scope), aDelivery(scope)];
    await store.insertMany([a, b]);
    const follow = (d: Delivery) =>
      aDelivery(scope, { webhookId: d.webhookId, eventId: d.eventId, attempt: 2, scheduledAt: at(5000) });
    const [nextA, nextB] = [follow(a), follow(b)];
    // A fault in the update of b's row only, raised after a's follow-up insert and a's update have run in
    // the same statement: if the two writes were separate, a and its follow-up would be written already.
    await sql.unsafe(`
      CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
      CREATE TRIGGER refuse_boom BEFORE UPDATE ON deliveries FOR EACH ROW
        WHEN (NEW.response_body = 'boom') EXECUTE FUNCTION refuse_boom();`);
    try {
      await expect(
        store.record([failedWith(a, nextA, "fine"), failedWith(b, nextB, "boom")]),
      ).rejects.toThrow(/refused by the test/);
      expect(await statuses([a.id, b.id, nextA.id, nextB.id])).toEqual(
        new Map([
          [a.id, "pending"],
          [b.id, "pending"],
        ]),
      );
    } finally {
      await sql.unsafe("DROP TRIGGER refuse_boom ON deliveries; DROP FUNCTION refuse_boom();");
    }

    // The same batch again, nothing refusing it: every result and follow-up, in one statement.
    await store.record([failedWith(a, nextA, "fine"), failedWith(b, nextB, "boom")]);
    expect(await statuses([a.id, b.id, nextA.id, nextB.id])).toEqual(
      new Map([
        [a.id, "failed"],
        [b.id, "failed"],
        [nextA.id, "pending"],
        [nextB.id, "pending"],
      ]),
    );
  });

  it("sends one statement for a batch of results with follow-ups", async () => {
    const store = new PostgresDeliveries(traced);
    const scope = newScope();
    const batch = Array.from({ length: 50 }, () => aDelivery(scope));
    await store.insertMany(batch);
    sent.length = 0;
    await store.record(
      batch.map((d, i) =>
        failedWith(d, i % 2 ? null : aDelivery(scope, { webhookId: d.webhookId, attempt: 2 }), "x"),
      ),
    );
    expect(sent).toHaveLength(1);
    const [row] = await sql<{ n: number }[]>`SELECT count(*)::integer AS n FROM deliveries`;
    expect(row?.n).toBe(75);
  });

  it("finds a batch's rows by primary key on a table that grew after the statement was first run", async () => {
    // A prepared statement run five times gets a generic plan, made once from the table's size then. Made
    // on a new, nearly empty table it joined the batch to a sequential scan of the whole table, and every
    // later batch kept scanning it as it grew (7 ms for 66 rows at 16,000 deliveries in `npm run bench`).
    // The store's connections plan each run for the table as it is (connection.ts).
    const store = new PostgresDeliveries(traced);
    const scope = newScope();
    const few = Array.from({ length: 3 }, () => aDelivery(scope));
    await store.insertMany(few);
    sent.length = 0;
    await store.record(few.map((d) => failedWith(d, null, "x")));
    const [statement] = sent;
    // The same statement and parameters, prepared on one connection of the store's settings and run the
    // five times after which PostgreSQL may stop planning it, on the small table.
    const one = openPostgres(db.url, { ...db.options, max: 1 });
    try {
      await one.unsafe(`PREPARE record_batch AS ${statement!.query}`);
      const [prepared] = await one<{ types: string[] }[]>`
        SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE name = 'record_batch'`;
      // EXECUTE takes no bound parameters: each is given as a literal of its type, quoted by the server.
      const literals = await Promise.all(
        prepared!.types.map(async (type, i) => {
          const [q] = await one.unsafe<{ literal: string }[]>(
            `SELECT quote_nullable($1::${type}::text) || '::${type}' AS literal`,
            [statement!.parameters[i]] as never[],
          );
          return q!.literal;
        }),
      );
      const execute = `EXECUTE record_batch(${literals.join(", ")})`;
      for (let i = 0; i < 6; i++) await one.unsafe(execute);
      await sql`
        INSERT INTO deliveries (id, tenant_id, project_id, webhook_id, event_id, event_type, attempt, trigger,
          status, url, scheduled_at, created_at, shard, sequence)
        SELECT 'grown-' || n, 't', 'p', 'w', 'e-' || n, 'message.delivered', 1, 'automatic', 'pending',
          'https://receiver.example/hooks', now(), now(), 0, n
        FROM generate_series(1, 20000) AS n`;
      const [plan] = await one.unsafe<{ "QUERY PLAN": unknown }[]>(`EXPLAIN (FORMAT JSON) ${execute}`);
      const scans = deliveriesScans(plan!["QUERY PLAN"]);
      expect(scans.map((n) => [n["Node Type"], n["Index Name"]])).toEqual([
        ["Index Scan", "deliveries_pkey"],
      ]);
    } finally {
      await one.end({ timeout: 5 });
    }
  });
});

describe("record, a full batch", () => {
  it("finds 200 results' rows by primary key on an analyzed table of 10,000, with the store's settings", async () => {
    // At PostgreSQL's default random_page_cost (4) the join of 200 results to `deliveries` was planned as a
    // scan of the whole table and a hash join, 5–10 ms a batch against 1.5–3.4 ms by primary key (ADR 18):
    // the store's connections plan with 1.1 (connection.ts), set on the embedded database's session.
    const store = new PostgresDeliveries(traced);
    const scope = newScope();
    const rows = Array.from({ length: 10_000 }, (_, i) =>
      aDelivery(scope, { status: i % 4 === 0 ? "pending" : "succeeded", createdAt: at(i) }),
    );
    for (let i = 0; i < rows.length; i += 5000) await store.insertMany(rows.slice(i, i + 5000));
    await sql`ANALYZE deliveries`;
    const batch = rows.filter((r) => r.status === "pending").slice(0, 200);
    sent.length = 0;
    await store.record(batch.map((d) => failedWith(d, null, "x")));
    const [statement] = sent;
    if (!statement) throw new Error("no statement was sent");
    const plan = await sql.unsafe<{ "QUERY PLAN": unknown }[]>(
      `EXPLAIN (FORMAT JSON) ${statement.query}`,
      statement.parameters as never[],
    );
    const scans = deliveriesScans(plan[0]!["QUERY PLAN"]);
    expect(scans.map((n) => n["Index Name"])).toEqual(["deliveries_pkey"]);
    expect(new Set((await statuses(batch.map((d) => d.id))).values())).toEqual(new Set(["failed"]));
  });
});

describe("due", () => {
  it("reads the partial index deliveries_due, on a table where pending rows are few", async () => {
    const store = new PostgresDeliveries(traced);
    const scope = newScope();
    const webhooks = Array.from({ length: 20 }, () => uuid());
    const rows = Array.from({ length: 20_000 }, (_, i) =>
      aDelivery(scope, {
        webhookId: webhooks[i % webhooks.length]!,
        status: i % 97 === 0 ? "pending" : "succeeded",
        scheduledAt: at(i),
        createdAt: at(i),
      }),
    );
    for (let i = 0; i < rows.length; i += 5000) await store.insertMany(rows.slice(i, i + 5000));
    await sql`ANALYZE deliveries`;

    const some = {
      shards: webhooks.slice(0, 5).map(shardOf),
      excludeWebhookIds: [webhooks[0]!],
      excludeIds: [rows[0]!.id, rows[97]!.id],
    };
    const requests = [
      { shards: null, excludeWebhookIds: [], excludeIds: [] },
      some,
      // Asking when the next comes due as well (ADR 30): the same index, for both halves.
      { shards: null, excludeWebhookIds: [], excludeIds: [], until: at(35_000) },
      { ...some, until: at(35_000) },
    ];
    for (const r of requests) {
      sent.length = 0;
      const due = await store.due({ now: at(30_000), limit: 50, ...r });
      expect(due.length).toBeGreaterThan(0);
      expect(due.every((d) => d.status === "pending")).toBe(true);
      const [statement] = sent;
      if (!statement) throw new Error("no statement was sent");
      const plan = await sql.unsafe(`EXPLAIN ${statement.query}`, statement.parameters as never[]);
      const text = plan.map((p) => p["QUERY PLAN"]).join("\n");
      // The only access to the table is the partial index (with few shards asked for, the planner may
      // take them as index conditions and sort the few rows found, which is as good).
      expect(text).toMatch(/Index Scan using deliveries_due on deliveries/);
      expect(text).not.toMatch(/Seq Scan|Bitmap|using (?!deliveries_due )\w+ on deliveries/);
    }
  });
});

describe("due, with until", () => {
  it("answers in the same statement when the shards' next pending delivery comes due, up to until", async () => {
    const store = new PostgresDeliveries(traced);
    const scope = newScope();
    const a = uuid();
    let b = uuid();
    while (shardOf(b) === shardOf(a)) b = uuid();
    const row = (webhookId: string, ms: number, status: Delivery["status"] = "pending") =>
      aDelivery(scope, { webhookId, status, scheduledAt: at(ms), createdAt: at(0) });
    const dueNow = row(a, 1_000);
    await store.insertMany([dueNow, row(a, 3_000, "succeeded"), row(a, 5_000), row(b, 2_000), row(a, 9_000)]);
    const read = async (shards: number[], until: number, excludeIds: string[] = []) => {
      sent.length = 0;
      const due = await store.due({
        now: at(1_500),
        shards,
        limit: 10,
        excludeWebhookIds: [],
        excludeIds,
        until: at(until),
      });
      expect(sent).toHaveLength(1);
      return { ids: due.map((d) => d.id), next: due.next };
    };
    expect(await read([shardOf(a)], 8_000)).toEqual({ ids: [dueNow.id], next: at(5_000) });
    // Another shard's sooner delivery counts only when its shard is read.
    expect(await read([shardOf(a), shardOf(b)], 8_000)).toEqual({ ids: [dueNow.id], next: at(2_000) });
    // Nothing pending by until: none (a later retry is not looked for).
    expect(await read([shardOf(a)], 4_000)).toEqual({ ids: [dueNow.id], next: null });
    // Nothing due to answer, and still when the next comes due.
    expect(await read([shardOf(a)], 8_000, [dueNow.id])).toEqual({ ids: [], next: at(5_000) });
    // Without until, no answer about it.
    expect(
      (
        await store.due({
          now: at(1_500),
          shards: [shardOf(a)],
          limit: 10,
          excludeWebhookIds: [],
          excludeIds: [],
        })
      ).next,
    ).toBeUndefined();
  });
});

describe("deleteCreatedBefore", () => {
  it("deletes in batches every finished record older than the moment, and nothing pending or younger", async () => {
    const batch = 100;
    const store = new PostgresDeliveries(traced, { deleteBatch: batch });
    const scope = newScope();
    const other = newScope();
    const old = (over: Partial<Delivery>, s = scope) =>
      aDelivery(s, { createdAt: at(0), status: "succeeded", ...over });
    const doomed = [
      ...Array.from({ length: 230 }, (_, i) => old({ createdAt: at(i) })),
      ...Array.from({ length: 20 }, () => old({ status: "failed" }, other)),
      old({ status: "cancelled" }),
      old({ status: "skipped" }),
    ];
    const kept = [
      ...Array.from({ length: 30 }, () => old({ status: "pending" })),
      old({ createdAt: at(1000) }),
      old({ createdAt: at(5000), status: "failed" }),
    ];
    await store.insertMany([...doomed, ...kept]);
    sent.length = 0;

    expect(await store.deleteCreatedBefore(at(1000))).toBe(doomed.length);
    const deletes = sent.filter((s) => /^\s*DELETE/.test(s.query));
    expect(deletes).toHaveLength(Math.ceil(doomed.length / batch));
    const left = await sql<{ id: string }[]>`SELECT id FROM deliveries`;
    expect(left.map((r) => r.id).sort()).toEqual(kept.map((d) => d.id).sort());
    expect(await store.deleteCreatedBefore(at(1000))).toBe(0);
  });

  it("takes one more statement when the last batch is exactly full, and keeps to the scope when given", async () => {
    const store = new PostgresDeliveries(traced, { deleteBatch: 10 });
    const scope = newScope();
    const other = newScope();
    const mine = Array.from({ length: 20 }, () => aDelivery(scope, { createdAt: at(0), status: "failed" }));
    const theirs = Array.from({ length: 5 }, () => aDelivery(other, { createdAt: at(0), status: "failed" }));
    await store.insertMany([...mine, ...theirs]);
    sent.length = 0;
    expect(await store.deleteCreatedBefore(at(1), scope)).toBe(20);
    expect(sent.filter((s) => /^\s*DELETE/.test(s.query))).toHaveLength(3);
    const left = await sql<{ id: string }[]>`SELECT id FROM deliveries`;
    expect(left.map((r) => r.id).sort()).toEqual(theirs.map((d) => d.id).sort());
  });
});
