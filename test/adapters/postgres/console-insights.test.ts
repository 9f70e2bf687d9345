import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "../../../src/adapters/postgres/connection.ts";
import { PostgresDeliveryInsights } from "../../../src/adapters/postgres/console-insights.ts";
import { PostgresDeliveries } from "../../../src/adapters/postgres/deliveries.ts";
import { migrate } from "../../../src/adapters/postgres/migrate.ts";
import type { Delivery } from "../../../src/domain/delivery.ts";
import { aDelivery, at, newScope, uuid } from "../../app/ports/fixtures.ts";
import { type FreshPostgres, freshPostgresDatabase, tracedPostgres } from "../../support/postgres.ts";

// The console's insights read a project through indexes, never the project's rows whole (one project is
// often the whole table), and the attempts read in time windows answer what one read would.

let db: FreshPostgres;
let sql: Sql;
let traced: Sql;
const sent: { query: string; parameters: unknown[] }[] = [];

const HOUR = 3_600_000;
const scope = newScope();
const webhooks = Array.from({ length: 8 }, () => uuid());
const STATUSES = ["succeeded", "failed", "skipped"] as const;
/** 24,000 finished attempts of one project over two days (distinct times), a backlog, and another project. */
const rows: Delivery[] = Array.from({ length: 24_000 }, (_, i) =>
  aDelivery(scope, {
    webhookId: webhooks[i % webhooks.length]!,
    status: STATUSES[i % 7 === 0 ? 1 : i % 11 === 0 ? 2 : 0],
    createdAt: at(i * 7_200 - 10),
    attemptedAt: at(i * 7_200),
    scheduledAt: at(i * 7_200 - 10),
  }),
);
const pending = Array.from({ length: 300 }, (_, i) =>
  aDelivery(scope, { webhookId: webhooks[i % 3]!, scheduledAt: at(48 * HOUR + i), createdAt: at(48 * HOUR) }),
);
const elsewhere = Array.from({ length: 2_000 }, (_, i) =>
  aDelivery(newScope(), { status: "succeeded", attemptedAt: at(i * 1000), createdAt: at(i * 1000) }),
);
const end = at(24_000 * 7_200);

beforeAll(async () => {
  db = await freshPostgresDatabase("herald_test_pg_console");
  sql = openPostgres(db.url, db.options);
  await migrate(sql);
  const store = new PostgresDeliveries(sql);
  const all = [...rows, ...pending, ...elsewhere];
  for (let i = 0; i < all.length; i += 5000) await store.insertMany(all.slice(i, i + 5000));
  await sql`ANALYZE deliveries`;
  traced = await tracedPostgres(db, (query, parameters) => sent.push({ query, parameters }));
});
afterAll(async () => {
  await traced?.end({ timeout: 5 });
  await sql?.end({ timeout: 5 });
  await db?.cleanup();
});

/** Runs `read` and answers the plans of the statements it sent. */
async function plansOf(read: () => Promise<unknown>): Promise<string[]> {
  sent.length = 0;
  await read();
  const plans: string[] = [];
  for (const s of [...sent]) {
    const plan = await sql.unsafe(`EXPLAIN ${s.query}`, s.parameters as never[]);
    plans.push(plan.map((p) => p["QUERY PLAN"]).join("\n"));
  }
  return plans;
}

describe("delivery insights on PostgreSQL", () => {
  const insights = () => new PostgresDeliveryInsights(traced);

  it("reads each query through its index, never a scan of the table", async () => {
    const reads: [string, () => Promise<unknown>, RegExp][] = [
      [
        "attempts since",
        () => insights().attemptsSince(scope, new Date(end.getTime() - 24 * HOUR), 1000),
        /deliveries_webhook_attempted/,
      ],
      ["last success", () => insights().lastSuccess(scope, webhooks), /deliveries_webhook_attempted/],
      [
        "list",
        () => insights().list(scope, null, {}, { limit: 50, cursor: null }),
        /deliveries_webhook_created/,
      ],
      [
        "list of some endpoints",
        () => insights().list(scope, webhooks.slice(0, 2), { status: "failed" }, { limit: 50, cursor: null }),
        /deliveries_webhook_created/,
      ],
      [
        "list of one event",
        () => insights().list(scope, null, { eventId: rows[5]!.eventId }, { limit: 50, cursor: null }),
        /deliveries_event_webhook/,
      ],
      [
        "changed since",
        () => insights().changedSince(scope, new Date(end.getTime() - HOUR), 200),
        /deliveries_webhook_attempted/,
      ],
      ["due backlog", () => insights().dueStats(scope, at(49 * HOUR)), /deliveries_due/],
      [
        "due backlog of some endpoints",
        () => insights().dueStats(scope, at(49 * HOUR), webhooks.slice(0, 2)),
        /deliveries_webhook_pending/,
      ],
    ];
    for (const [name, read, index] of reads) {
      const plans = await plansOf(read);
      expect(plans.length, name).toBeGreaterThan(0);
      for (const plan of plans) expect(plan, name).not.toMatch(/Seq Scan on deliveries/);
      expect(plans.join("\n"), name).toMatch(index);
    }
  });

  it("answers attempts since a moment as one newest-first read would, across many windows", async () => {
    const brute = async (since: Date, limit: number) =>
      (
        await sql<{ webhook_id: string; status: string; attempted_at: Date }[]>`
          SELECT webhook_id, status, attempted_at FROM deliveries
          WHERE tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId} AND attempted_at >= ${since}
          ORDER BY attempted_at DESC LIMIT ${limit}`
      ).map((r) => ({ webhookId: r.webhook_id, status: r.status, attemptedAt: r.attempted_at }));
    for (const [sinceMs, limit] of [
      [0, 20_000],
      [0, 24_000],
      [0, 30_000],
      [end.getTime() - at(0).getTime() - 24 * HOUR, 20_000],
      [end.getTime() - at(0).getTime() - 3 * HOUR, 100],
      [end.getTime() - at(0).getTime() + HOUR, 100],
    ] as const) {
      const since = at(sinceMs);
      const got = await insights().attemptsSince(scope, since, limit);
      expect(got, `since ${sinceMs}, limit ${limit}`).toEqual(await brute(since, limit));
    }
  });
});
