import type { Sql } from "postgres";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { openPostgres } from "../../../src/adapters/postgres/connection.ts";
import { migrate } from "../../../src/adapters/postgres/migrate.ts";
import { ReadCache } from "../../../src/adapters/postgres/read-cache.ts";
import { createPostgresRepositories } from "../../../src/adapters/postgres/repositories.ts";
import type { Repositories } from "../../../src/app/ports/store.ts";
import type { FreshPostgres } from "../../support/postgres.ts";
import { freshPostgresDatabase } from "../../support/postgres.ts";

/**
 * What read-cache.test.ts and read-cache-proof.test.ts share: a database of the file's own, "here" a
 * Herald process with the cache (`sqlHere`, `cache`), "there" another process writing the same database
 * (`sqlThere`, `there`). The cache is made anew before each test on a clock frozen at 0 that only a test
 * moves (`clock.now`). Exported as live bindings: a test reads the ones the hooks set for it.
 */
export let db: FreshPostgres;
export let sqlHere: Sql;
export let sqlThere: Sql;
export let cache: ReadCache;
export let there: Repositories;
export const clock = { now: 0 };

/** Registers the file's hooks; call it inside the file's describeOnServer. */
export function readCacheOnServer(databasePrefix: string): void {
  beforeAll(async () => {
    db = await freshPostgresDatabase(databasePrefix);
    sqlHere = openPostgres(db.url, db.options);
    await migrate(sqlHere);
    sqlThere = openPostgres(db.url, db.options);
    there = createPostgresRepositories(sqlThere);
  });
  afterAll(async () => {
    cache?.close();
    await sqlThere?.end({ timeout: 5 });
    await sqlHere?.end({ timeout: 5 });
    await db?.cleanup();
  });
  beforeEach(async () => {
    cache?.close();
    clock.now = 0;
    cache = new ReadCache(sqlHere, () => clock.now);
    await cache.start();
  });
}

/** The heartbeats the cache awaits; `silence` adds one that never comes back (a channel gone silent). */
export const beats = () => (cache as unknown as { beats: Map<string, number> }).beats;
export const silence = () => beats().set("beat:lost", clock.now);
