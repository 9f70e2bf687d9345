import { readdir, readFile } from "node:fs/promises";
import type { Sql } from "postgres";

/** One numbered schema change: `migrations/NNNN-name.sql`, applied once, in order. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Any constant shared by every Herald process: the key of the advisory lock migrations run under. */
const MIGRATION_LOCK = 0x4845_5241; // "HERA"

const MIGRATIONS_DIR = new URL("./migrations/", import.meta.url);

/** The migrations shipped with this version, in order. */
export async function shippedMigrations(): Promise<Migration[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}-[a-z0-9-]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: await readFile(new URL(file, MIGRATIONS_DIR), "utf8"),
    })),
  );
}

/**
 * Brings the schema up to date: in one transaction under an advisory lock, so processes starting at once
 * wait for each other and the second finds nothing left to do; each applied migration is recorded in
 * `herald_migrations`. A database migrated by a newer Herald (a version this one does not know) is refused.
 * Answers the versions applied now.
 */
export async function migrate(sql: Sql, migrations?: readonly Migration[]): Promise<number[]> {
  const all = migrations ?? (await shippedMigrations());
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`
      CREATE TABLE IF NOT EXISTS herald_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`;
    const rows = await tx<{ version: number }[]>`SELECT version FROM herald_migrations`;
    const applied = new Set(rows.map((r) => r.version));
    const known = new Set(all.map((m) => m.version));
    const newer = [...applied].filter((v) => !known.has(v));
    if (newer.length > 0)
      throw new Error(
        `the database was migrated by a newer Herald (schema version ${Math.max(...newer)}); run that version or newer`,
      );
    const done: number[] = [];
    for (const m of all) {
      if (applied.has(m.version)) continue;
      await tx.unsafe(m.sql);
      await tx`INSERT INTO herald_migrations (version, name) VALUES (${m.version}, ${m.name})`;
      done.push(m.version);
    }
    return done;
  });
}
