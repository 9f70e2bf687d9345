import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, resolve, sep } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { Options, PostgresType } from "postgres";
import { DEFAULT_POSTGRES_OPTIONS } from "./connection.ts";
import { alive, type Holder, lock, self, unlock } from "./embedded-lock.ts";
import { serveEmbedded } from "./embedded-server.ts";

/** postgres.js options for a client of the embedded database (merged over the store's defaults). */
export type EmbeddedPostgresOptions = Options<Record<string, PostgresType>>;

/** An embedded PostgreSQL served by this process on loopback. */
export interface EmbeddedPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: no password, no TLS. */
  url: string;
  /** Pass these to postgres.js with the URL (docs/adr/0017-embedded-postgres.md says why each). */
  options: EmbeddedPostgresOptions;
  /** Closes every connection, flushes and closes the database, removes the state and lock files. */
  stop(): Promise<void>;
}

/**
 * - `ssl: false`: the server speaks in the clear on loopback (it answers an SSL request with 'N').
 * - `max: 2`: one backend runs one statement at a time, so connections add no parallelism; postgres.js
 *   pipelines on each. Measured with 8 concurrent writers: 1 connection ~13,100 INSERTs/s, 2 ~12,400,
 *   4 ~11,200 (ADR 17). Two, not one, so that a connection held by `sql.reserve()` outside a transaction
 *   does not stall every other query behind it in postgres.js's own queue. (A transaction stalls the
 *   others whatever `max` is: the one backend is in it.)
 * - `prepare: true` (postgres.js's default), explicit: statements are named per connection, and the
 *   server frees a connection's statements when it closes.
 * - `connect_timeout: 10`: a new connection's start-up waits while another connection's transaction runs.
 */
export const EMBEDDED_POSTGRES_OPTIONS: EmbeddedPostgresOptions = {
  ssl: false,
  max: 2,
  prepare: true,
  connect_timeout: 10,
};

const stateFile = (dir: string) => join(dir, "embedded-postgres.json");

/**
 * Starts PGlite on `<dataDir>/pg` (created on first use) and serves it on a free loopback port. The data
 * directory is locked for this process first: PGlite is one process's database, and a second process
 * writing the same files loses writes silently (seen: its rows were gone after both closed). The server's
 * URL goes to `<dataDir>/embedded-postgres.json` so that the CLI, another process, can reach it.
 */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const dir = resolve(dataDir);
  await mkdir(dir, { recursive: true });
  await lock(dir);
  let db: PGlite | null = null;
  try {
    db = await openCluster(join(dir, "pg"));
    // PGlite's one session does not take the planner settings from a client's startup message, where
    // postgres.js sends the store's connection settings: set on the session, they hold for every client.
    const { plan_cache_mode, random_page_cost } = DEFAULT_POSTGRES_OPTIONS.connection ?? {};
    await db.exec(`SET plan_cache_mode = '${plan_cache_mode}'; SET random_page_cost = ${random_page_cost}`);
    const opened = db;
    const server = await serveEmbedded(opened, { host: "127.0.0.1" });
    const url = `postgres://postgres@${server.host}:${server.port}/postgres`;
    await writeAtomically(stateFile(dir), JSON.stringify({ url, ...self() }));
    let stopping: Promise<void> | null = null;
    return {
      url,
      options: { ...EMBEDDED_POSTGRES_OPTIONS },
      stop() {
        stopping ??= (async () => {
          await rm(stateFile(dir), { force: true });
          try {
            await server.close();
            // A PGlite that failed hangs on every call, close() included: leave it to the process's end.
            if (server.failure === null) await opened.close();
          } finally {
            await unlock(dir);
          }
        })();
        return stopping;
      },
    };
  } catch (e) {
    await db?.close().catch(() => {});
    await rm(stateFile(dir), { force: true }).catch(() => {});
    await unlock(dir);
    throw e;
  }
}

/**
 * Opens the cluster in `pg`, making it first when there is none. initdb writes about a thousand small
 * files; through PGlite's Node filesystem that took 12 s where the same initdb in memory took 3 s and
 * copying its dump in 1.4 s (ADR 17). So a new cluster is a copy of a pristine one made in memory, kept
 * in node_modules/.cache/herald for the next new directory (tests make many). It is copied into `pg.new`
 * and renamed to `pg` once whole: a first start cut short leaves only `pg.new`, made again next time.
 */
async function openCluster(pg: string): Promise<PGlite> {
  if (existsSync(join(pg, "PG_VERSION"))) return PGlite.create({ dataDir: pg });
  if (existsSync(pg))
    throw new Error(`${pg} is not a PostgreSQL data directory (no PG_VERSION): move it away`);
  const making = `${pg}.new`;
  for (const cached of [true, false]) {
    await rm(making, { recursive: true, force: true });
    const template = await pristineCluster(cached);
    try {
      await (await PGlite.create({ dataDir: making, loadDataDir: template.dump })).close();
      break;
    } catch (e) {
      if (!cached || !template.fromCache) throw e;
      await rm(template.path ?? "", { force: true }); // a damaged cached copy: make a new one
    }
  }
  await rename(making, pg);
  return PGlite.create({ dataDir: pg });
}

/** A dump of a just-made cluster: the cached one when `cached` and it exists, else made now (and cached). */
async function pristineCluster(
  cached: boolean,
): Promise<{ dump: Blob; fromCache: boolean; path: string | null }> {
  const path = templatePath();
  if (cached && path) {
    try {
      return { dump: new Blob([await readFile(path)]), fromCache: true, path };
    } catch {
      // none yet
    }
  }
  const db = await PGlite.create({ dataDir: "memory://" });
  let dump: Blob;
  try {
    dump = await db.dumpDataDir("gzip");
  } finally {
    await db.close();
  }
  if (path) {
    try {
      await mkdir(dirname(path), { recursive: true });
      await writeAtomically(path, new Uint8Array(await dump.arrayBuffer()));
    } catch {
      // A read-only node_modules: every new directory makes its own, slower but the same.
    }
  }
  return { dump, fromCache: false, path };
}

/** node_modules/.cache/herald/pglite-<version>.tar.gz beside the installed PGlite, or null when unknown. */
function templatePath(): string | null {
  try {
    const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
    const packageDir = join(dirname(entry), "..");
    const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
      version: string;
    };
    const at = packageDir.lastIndexOf(`${sep}node_modules${sep}`);
    if (at < 0 || !/^[\w.-]+$/.test(version)) return null;
    return join(packageDir.slice(0, at), "node_modules", ".cache", "herald", `pglite-${version}.tar.gz`);
  } catch {
    return null;
  }
}

/** The URL of the embedded database a live Herald serves from this data directory, if any. */
export async function runningEmbeddedPostgresUrl(dataDir: string): Promise<string | null> {
  try {
    const state = JSON.parse(await readFile(stateFile(resolve(dataDir)), "utf8")) as Partial<Holder> & {
      url?: unknown;
    };
    if (typeof state.url !== "string" || typeof state.pid !== "number") return null;
    return alive({ pid: state.pid, started: state.started ?? null }, resolve(dataDir)) ? state.url : null;
  } catch {
    return null;
  }
}

/**
 * One message when the data directory holds an earlier Herald's embedded MongoDB (WiredTiger files in
 * `<dataDir>/db`), else null: this version's embedded database is PostgreSQL, and starting an empty one
 * beside those files would look like lost data.
 */
export function legacyMongoDataNotice(dataDir: string): string | null {
  const dir = resolve(dataDir);
  const db = join(dir, "db");
  let files: string[];
  try {
    files = readdirSync(db);
  } catch {
    return null;
  }
  const wiredTiger = files.filter((f) => f === "WiredTiger" || f === "mongod.lock" || f.endsWith(".wt"));
  if (wiredTiger.length === 0) return null;
  const state = existsSync(join(dir, "embedded.json")) ? ` and ${join(dir, "embedded.json")}` : "";
  return [
    `${db} holds the MongoDB files of an earlier Herald's embedded database (${wiredTiger.length} WiredTiger files).`,
    "Herald's embedded database is now PostgreSQL, and it will not start an empty one beside that data.",
    `To keep using it: run a mongod of the version that wrote them on those files (mongod --dbpath ${db}) and set`,
    "MONGODB_URI=mongodb://127.0.0.1:27017, or set HERALD_STORE=mongo to start the embedded MongoDB again",
    `where a mongod binary can be had. To start fresh on the embedded PostgreSQL: move or delete ${db}${state},`,
    "or set HERALD_DATA_DIR to another directory.",
  ].join(" ");
}

/** Writes a file that readers see either whole or not at all. */
async function writeAtomically(path: string, content: string | Uint8Array): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, content);
    await rename(temporary, path);
  } finally {
    await rm(temporary, { force: true });
  }
}
