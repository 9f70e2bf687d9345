import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { link, mkdir, readFile, rename, rm, unlink, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { Options, PostgresType } from "postgres";
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
 * - `ssl: false`: the server speaks in the clear on loopback and answers an SSL request with 'N'.
 * - `max: 4`: one backend runs one statement at a time, so more connections add no parallelism, but a few
 *   let one connection's transaction wait in the server while others' statements queue behind it
 *   (measured: 4 connections did as well as 8; ADR 17).
 * - `prepare: true` (postgres.js's default), kept explicit: statements are named per connection, and the
 *   server frees a connection's statements when it closes.
 * - `connect_timeout: 10`: the first connection waits while the server finishes other connections' work.
 */
export const EMBEDDED_POSTGRES_OPTIONS: EmbeddedPostgresOptions = {
  ssl: false,
  max: 4,
  prepare: true,
  connect_timeout: 10,
};

/** Another process (or this one) has the data directory's database open. */
export class EmbeddedPostgresInUseError extends Error {
  constructor(dataDir: string, pid: number) {
    super(`The embedded database in ${dataDir} is in use by another process (pid ${pid})`);
    this.name = "EmbeddedPostgresInUseError";
  }
}

const stateFile = (dir: string) => join(dir, "embedded-postgres.json");
const lockFile = (dir: string) => join(dir, "embedded-postgres.lock");
/** Directories this process holds open: a second start here must fail as one from another process does. */
const heldHere = new Set<string>();

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
    db = await PGlite.create({ dataDir: join(dir, "pg") });
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
            await opened.close();
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
    `To keep using it: run a mongod on those files (mongod --dbpath ${db} --bind_ip 127.0.0.1) and set`,
    "MONGODB_URI=mongodb://127.0.0.1:27017, or set HERALD_STORE=mongo to start the embedded MongoDB again",
    `where a mongod binary can be had. To start fresh on the embedded PostgreSQL: move or delete ${db}${state},`,
    "or set HERALD_DATA_DIR to another directory.",
  ].join(" ");
}

/** Who holds a lock: a pid, and on Linux the process's start time, so a reused pid is not taken for it. */
interface Holder {
  pid: number;
  started: string | null;
}

function self(): Holder {
  return { pid: process.pid, started: startTime(process.pid) };
}

/** The process's start time in clock ticks since boot (/proc/<pid>/stat, field 22), where /proc exists. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether the holder is a running process; this process counts only for a directory it holds. */
function alive(holder: Holder, dir: string): boolean {
  if (holder.pid === process.pid) return heldHere.has(dir);
  try {
    process.kill(holder.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const now = holder.started === null ? null : startTime(holder.pid);
  return now === null || now === holder.started;
}

async function readHolder(path: string): Promise<Holder | null> {
  try {
    const held = JSON.parse(await readFile(path, "utf8")) as Partial<Holder>;
    return typeof held.pid === "number" ? { pid: held.pid, started: held.started ?? null } : null;
  } catch {
    return null;
  }
}

/**
 * Takes `<dir>/embedded-postgres.lock`. The file is written whole under another name and then linked
 * into place, so it exists only complete and only one process's link succeeds. A lock whose holder is
 * gone (killed) is moved aside under a name of our own first; if what we moved turns out to be a live
 * holder's (it took the lock between our read and our move), it goes back and we yield.
 */
async function lock(dir: string): Promise<void> {
  if (heldHere.has(dir)) throw new EmbeddedPostgresInUseError(dir, process.pid);
  const path = lockFile(dir);
  const me = self();
  const mine = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
  await writeFile(mine, JSON.stringify(me));
  try {
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        await link(mine, path);
        heldHere.add(dir);
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      const holder = await readHolder(path);
      if (holder && alive(holder, dir)) throw new EmbeddedPostgresInUseError(dir, holder.pid);
      const aside = `${mine}.stale`;
      try {
        await rename(path, aside);
      } catch {
        continue; // someone else moved it first: try to take it again
      }
      const moved = await readHolder(aside);
      if (moved && alive(moved, dir)) {
        await link(aside, path).catch(() => {});
        await unlink(aside).catch(() => {});
        throw new EmbeddedPostgresInUseError(dir, moved.pid);
      }
      await unlink(aside).catch(() => {});
    }
    throw new Error(`Could not take the lock ${path}: it keeps changing hands`);
  } finally {
    await unlink(mine).catch(() => {});
  }
}

async function unlock(dir: string): Promise<void> {
  if (!heldHere.delete(dir)) return;
  const holder = await readHolder(lockFile(dir));
  if (holder?.pid === process.pid) await rm(lockFile(dir), { force: true });
}

/** Writes a file that readers see either whole or not at all. */
async function writeAtomically(path: string, text: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, path);
}
