import type { Sql } from "postgres";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openPostgres } from "../../../src/adapters/postgres/connection.ts";
import { type Migration, migrate, shippedMigrations } from "../../../src/adapters/postgres/migrate.ts";
import { type FreshPostgres, freshPostgresDatabase } from "../../support/postgres.ts";

// The schema's migrations: applied once whoever starts at once, refused when newer than this Herald,
// and an older database brought up to date. Each test has a database of its own.

let db: FreshPostgres;
const clients: Sql[] = [];
const connect = (): Sql => {
  const sql = openPostgres(db.url, { ...db.options, max: 1 });
  clients.push(sql);
  return sql;
};

beforeEach(async () => {
  db = await freshPostgresDatabase("herald_test_pg_migrate");
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.end({ timeout: 5 })));
  await db.cleanup();
});

const recorded = async (sql: Sql) =>
  (await sql<{ version: number }[]>`SELECT version FROM herald_migrations ORDER BY version`).map(
    (r) => r.version,
  );

const tableExists = async (sql: Sql, name: string) =>
  (await sql<{ t: string | null }[]>`SELECT to_regclass(${name})::text AS t`)[0]?.t !== null;

// A test-only history: the first version of a table, then a change to it that keeps its rows.
const m1: Migration = {
  version: 1,
  name: "first",
  sql: "CREATE TABLE widgets (id text PRIMARY KEY); INSERT INTO widgets VALUES ('w1');",
};
const m2: Migration = {
  version: 2,
  name: "second",
  sql: "ALTER TABLE widgets ADD COLUMN colour text NOT NULL DEFAULT 'red'; CREATE INDEX widgets_colour ON widgets (colour);",
};

describe("migrate", () => {
  it("applies the shipped migrations once when several connections start at once", async () => {
    const shipped = await shippedMigrations();
    expect(shipped.map((m) => m.version)).toEqual([...shipped.keys()].map((i) => i + 1));
    const starters = Array.from({ length: 5 }, connect);
    const applied = await Promise.all(starters.map((sql) => migrate(sql)));
    // One of them applied every version; the others waited on the lock and found nothing left to do.
    const all = shipped.map((m) => m.version);
    expect(applied.filter((a) => a.length > 0)).toEqual([all]);
    expect(applied.filter((a) => a.length === 0)).toHaveLength(4);
    expect(await recorded(starters[0]!)).toEqual(all);
    for (const table of ["endpoints", "events", "deliveries", "shard_leases", "idempotency_keys"])
      expect(await tableExists(starters[0]!, table)).toBe(true);
    // Starting again changes nothing.
    expect(await migrate(starters[1]!)).toEqual([]);
  });

  it("refuses a database migrated by a newer Herald, naming the version, and changes nothing", async () => {
    const sql = connect();
    await migrate(sql, [m1]);
    await sql`INSERT INTO herald_migrations (version, name) VALUES (9999, 'from the future')`;
    await expect(migrate(sql, [m1, m2])).rejects.toThrow(
      /migrated by a newer Herald \(schema version 9999\); run that version or newer/,
    );
    expect(await recorded(sql)).toEqual([1, 9999]);
    const [column] = await sql`
      SELECT 1 FROM information_schema.columns WHERE table_name = 'widgets' AND column_name = 'colour'`;
    expect(column).toBeUndefined();
  });

  it("upgrades a database built by an older version, keeping its rows", async () => {
    const sql = connect();
    expect(await migrate(sql, [m1])).toEqual([1]);
    expect(await recorded(sql)).toEqual([1]);
    expect(await migrate(sql, [m1, m2])).toEqual([2]);
    expect(await recorded(sql)).toEqual([1, 2]);
    expect(await sql`SELECT id, colour FROM widgets`).toEqual([{ id: "w1", colour: "red" }]);
    expect(await migrate(sql, [m1, m2])).toEqual([]);
  });

  it("leaves nothing of a migration that fails half-way, and applies it once it is fixed", async () => {
    const sql = connect();
    await migrate(sql, [m1]);
    const broken: Migration = { ...m2, sql: `${m2.sql} SELECT no_such_function();` };
    await expect(migrate(sql, [m1, broken])).rejects.toThrow(/no_such_function/);
    expect(await recorded(sql)).toEqual([1]);
    expect(await tableExists(sql, "widgets_colour")).toBe(false);
    expect(await migrate(sql, [m1, m2])).toEqual([2]);
  });
});
