import { afterAll, beforeAll } from "vitest";
import { createPostgresConsoleStore } from "../../../src/adapters/postgres/console.ts";
import { connectPostgres, type PostgresConnection } from "../../../src/adapters/postgres/index.ts";
import { consoleContract } from "../../app/ports/console-contract.ts";
import { repositoryContract } from "../../app/ports/repository-contract.ts";
import { freshPostgresDatabase } from "../../support/postgres.ts";

// One database for the file; each contract test starts from empty tables (TRUNCATE is far cheaper than a
// database per test, and the tests of one file run one after the other).
let db: Awaited<ReturnType<typeof freshPostgresDatabase>>;
let connection: PostgresConnection;

beforeAll(async () => {
  db = await freshPostgresDatabase("herald_test_contract");
  // The contract runs with the server's read cache on: every write through the repositories must be seen by the next read.
  connection = await connectPostgres(db.url, db.options, { cache: !db.embedded, sole: db.embedded });
});
afterAll(async () => {
  await connection?.sql.end({ timeout: 5 });
  await db?.cleanup();
});

/** Empties every table Herald keeps (the migrations' record stays). */
async function emptyTables(): Promise<void> {
  const tables = await connection.sql<{ name: string }[]>`
    SELECT tablename AS name FROM pg_tables
    WHERE schemaname = current_schema() AND tablename <> 'herald_migrations'`;
  await connection.sql.unsafe(`TRUNCATE ${tables.map((t) => `"${t.name}"`).join(", ")}`);
  // Written around the repositories: the trigger's notice would clear the cache, but a moment later.
  connection.cache?.clear();
}

repositoryContract("postgres", async () => {
  await emptyTables();
  return { repos: connection.repositories, cleanup: async () => {} };
});

consoleContract("postgres", async () => {
  await emptyTables();
  return {
    repos: connection.repositories,
    ...createPostgresConsoleStore(connection.sql),
    cleanup: async () => {},
  };
});
