import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Options, PostgresType, Sql } from "postgres";
import { describe, inject } from "vitest";
import { openPostgres } from "../../src/adapters/postgres/connection.ts";

export type PostgresOptions = Options<Record<string, PostgresType>>;

export interface FreshPostgres {
  /** postgres://.../<database>: the database of its own. */
  url: string;
  /** Connection options the database needs (the embedded one's); {} on a server. */
  options: PostgresOptions;
  /** Whether this is an embedded PostgreSQL in this test process (no server for the run). */
  embedded: boolean;
  /** Drops the database, closing whatever is still connected to it. */
  cleanup(): Promise<void>;
}

/** A database name unique to this call: `<prefix>_<random>`, lower-case, within PostgreSQL's 63 bytes. */
export function uniquePostgresName(prefix: string): string {
  const random = globalThis.crypto.randomUUID().replaceAll("-", "").slice(0, 16);
  return `${prefix.toLowerCase().replace(/[^a-z0-9_]/g, "_")}_${random}`.slice(0, 63);
}

/**
 * A database of its own on the run's PostgreSQL server (global-setup.ts provides `postgresUrl`): one per
 * test file, made with CREATE DATABASE, nothing shared. With no server for the run, an embedded
 * PostgreSQL of its own in a temporary directory instead.
 */
export async function freshPostgresDatabase(prefix = "herald_test"): Promise<FreshPostgres> {
  const serverUrl = inject("postgresUrl");
  if (!serverUrl) return freshEmbedded();
  const name = uniquePostgresName(prefix);
  const admin = async (statement: string) => {
    const sql = openPostgres(serverUrl, { max: 1 });
    try {
      await sql.unsafe(statement);
    } finally {
      await sql.end({ timeout: 5 });
    }
  };
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    options: {},
    embedded: false,
    // FORCE (PostgreSQL 13+) ends the connections of Herald processes a test left running.
    cleanup: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

async function freshEmbedded(): Promise<FreshPostgres> {
  const { startEmbeddedPostgres } = await import("../../src/adapters/postgres/embedded.ts");
  const dir = mkdtempSync(join(tmpdir(), "herald-test-embedded-"));
  try {
    const embedded = await startEmbeddedPostgres(dir);
    return {
      url: embedded.url,
      options: embedded.options,
      embedded: true,
      async cleanup() {
        try {
          await embedded.stop();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/**
 * A describe for what needs a PostgreSQL server: LISTEN/NOTIFY (the read cache, the due signals) and the
 * sessions' startup parameters. The embedded database's one session carries no notifications (Herald
 * uses neither there, src/main/store.ts) and ignores startup parameters; on a run without a server these
 * are skipped (test/README.md).
 */
export const describeOnServer = describe.runIf(Boolean(inject("postgresUrl")));

/**
 * A connection to `db` that tells `onStatement` every statement sent through it, with its parameters
 * (postgres.js's debug hook). Its first query, which learns the array types, is made here: the caller
 * hears only the statements that come after.
 */
export async function tracedPostgres(
  db: FreshPostgres,
  onStatement: (query: string, parameters: unknown[]) => void,
): Promise<Sql> {
  let learnt = false;
  const traced = openPostgres(db.url, {
    ...db.options,
    debug: (_connection: number, query: string, parameters: unknown[]) => {
      if (learnt) onStatement(query, parameters);
    },
  });
  await traced`SELECT 1`;
  learnt = true;
  return traced;
}
