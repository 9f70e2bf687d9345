import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import postgres from "postgres";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  type EmbeddedPostgres,
  legacyMongoDataNotice,
  runningEmbeddedPostgresUrl,
  startEmbeddedPostgres,
} from "../../../src/adapters/postgres/embedded.ts";
import { EmbeddedPostgresInUseError } from "../../../src/adapters/postgres/embedded-lock.ts";
import { PATIENCE_MS } from "../../support/patience.ts";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../../", import.meta.url));
const child = fileURLToPath(new URL("./fixtures/embedded-child.ts", import.meta.url));

const base = mkdtempSync(join(tmpdir(), "herald-embedded-"));
let dirs = 0;
const freshDir = () => join(base, `d${++dirs}`);

const started: EmbeddedPostgres[] = [];
const clients: postgres.Sql[] = [];
async function start(dir: string): Promise<EmbeddedPostgres> {
  const embedded = await startEmbeddedPostgres(dir);
  started.push(embedded);
  return embedded;
}
function connect(embedded: EmbeddedPostgres): postgres.Sql {
  const sql = postgres(embedded.url, { ...embedded.options, onnotice: () => {} });
  clients.push(sql);
  return sql;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((sql) => sql.end({ timeout: 5 })));
  await Promise.all(started.splice(0).map((e) => e.stop()));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Runs the child fixture under Node and answers the JSON lines it printed (Bun and Deno: embedded-runtimes.test.ts). */
async function childSays(args: string[]): Promise<Record<string, unknown>[]> {
  const { stdout } = await run(process.execPath, [child, ...args], { cwd: root, timeout: PATIENCE_MS });
  return stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("startEmbeddedPostgres", () => {
  it("keeps what was written across a stop and a start, reached through postgres.js", async () => {
    const dir = freshDir();
    const first = await start(dir);
    expect(first.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    const sql = connect(first);
    await sql`CREATE TABLE note (id serial PRIMARY KEY, body text NOT NULL)`;
    await sql.begin(async (tx) => {
      await tx`INSERT INTO note (body) VALUES (${"kept"})`;
      await tx`INSERT INTO note (body) VALUES (${"also kept"})`;
    });
    await sql.end();
    await first.stop();

    const second = await start(dir);
    const rows = await connect(second)<{ body: string }[]>`SELECT body FROM note ORDER BY id`;
    expect(rows.map((r) => r.body)).toEqual(["kept", "also kept"]);
  });

  it("plans with the store's settings, as its server connections do", async () => {
    // PGlite's one session ignores the planner settings in a client's startup message (connection.ts).
    const sql = connect(await start(freshDir()));
    const [row] = await sql<{ mode: string; cost: string }[]>`
      SELECT current_setting('plan_cache_mode') AS mode, current_setting('random_page_cost') AS cost`;
    expect(row).toEqual({ mode: "force_custom_plan", cost: "1.1" });
  });

  it("makes the cluster again when a first start was cut short while copying it", async () => {
    const dir = freshDir();
    mkdirSync(join(dir, "pg.new", "base"), { recursive: true });
    writeFileSync(join(dir, "pg.new", "base", "half-written"), "x");
    const embedded = await start(dir);
    expect((await connect(embedded)<{ v: number }[]>`SELECT 1 AS v`)[0]?.v).toBe(1);
    expect(existsSync(join(dir, "pg.new"))).toBe(false);
  });

  it("writes the state file while it runs and removes it on stop", async () => {
    const dir = freshDir();
    expect(await runningEmbeddedPostgresUrl(dir)).toBeNull();
    const embedded = await start(dir);
    const state = JSON.parse(readFileSync(join(dir, "embedded-postgres.json"), "utf8"));
    expect(state).toMatchObject({ url: embedded.url, pid: process.pid });
    // Read as the CLI reads it: this process is alive, so the URL is the running server's.
    expect(await runningEmbeddedPostgresUrl(dir)).toBe(embedded.url);
    await embedded.stop();
    expect(existsSync(join(dir, "embedded-postgres.json"))).toBe(false);
    expect(existsSync(join(dir, "embedded-postgres.lock"))).toBe(false);
    expect(await runningEmbeddedPostgresUrl(dir)).toBeNull();
  });

  it("ignores a state file whose process is gone", async () => {
    const dir = freshDir();
    mkdirSync(dir, { recursive: true });
    const gone = spawn(process.execPath, ["-e", ""]);
    await new Promise((done) => gone.once("exit", done));
    writeFileSync(
      join(dir, "embedded-postgres.json"),
      JSON.stringify({ url: "postgres://postgres@127.0.0.1:1/postgres", pid: gone.pid }),
    );
    expect(await runningEmbeddedPostgresUrl(dir)).toBeNull();
  });

  it("refuses a second opener of the same directory, in this process or another, and loses nothing", async () => {
    const dir = freshDir();
    const embedded = await start(dir);
    const sql = connect(embedded);
    await sql`CREATE TABLE note (body text NOT NULL)`;
    await sql`INSERT INTO note VALUES ('before')`;

    const here = await startEmbeddedPostgres(dir).catch((e: unknown) => e);
    expect(here).toBeInstanceOf(EmbeddedPostgresInUseError);
    expect((here as Error).message).toContain(`The embedded database in ${dir} is in use by another process`);
    const [other] = await childSays(["open", dir]);
    expect(other?.error).toContain(`The embedded database in ${dir} is in use by another process`);

    await sql`INSERT INTO note VALUES ('after')`;
    await sql.end();
    await embedded.stop();
    const again = await start(dir);
    const rows = await connect(again)<{ body: string }[]>`SELECT body FROM note ORDER BY body DESC`;
    expect(rows.map((r) => r.body)).toEqual(["before", "after"]);
  });

  it("opens a directory whose previous owner was killed, with every committed row (SIGKILL right after COMMIT)", async () => {
    const dir = freshDir();
    // HERALD_EMBEDDED_KILL_ROUNDS raises the count for a measurement (ADR 17 reports 20 rounds).
    const rounds = Number(process.env.HERALD_EMBEDDED_KILL_ROUNDS ?? 3);
    const committed: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const proc = spawn(process.execPath, [child, "insert", dir], { cwd: root });
      try {
        const lines = createInterface({ input: proc.stdout });
        const next = lineReader(lines);
        expect(await next()).toEqual({ ready: true });
        proc.stdin.write(`round ${round}\n`);
        const said = await next();
        proc.kill("SIGKILL"); // at once: the row was committed, nothing more
        committed.push(Number(said.committed));
      } finally {
        await killed(proc);
      }
    }
    const embedded = await start(dir);
    const rows = await connect(embedded)<{ id: number }[]>`SELECT id FROM crash ORDER BY id`;
    expect(rows.map((r) => r.id)).toEqual(committed);
  });
});

describe("legacyMongoDataNotice", () => {
  it("names the earlier embedded MongoDB's files and both ways on", () => {
    const dir = freshDir();
    mkdirSync(join(dir, "db"), { recursive: true });
    writeFileSync(join(dir, "db", "WiredTiger"), "WiredTiger\nWiredTiger 11.2.0\n");
    writeFileSync(join(dir, "db", "collection-0-123.wt"), "");
    writeFileSync(join(dir, "embedded.json"), "{}");
    const notice = legacyMongoDataNotice(dir);
    expect(notice).toContain(join(dir, "db"));
    expect(notice).toContain("MONGODB_URI");
    expect(notice).toContain("move or delete");
    expect(notice).toContain(join(dir, "embedded.json"));
  });

  it("says nothing for a fresh directory, an empty db folder, or the embedded PostgreSQL's own files", async () => {
    const fresh = freshDir();
    expect(legacyMongoDataNotice(fresh)).toBeNull();
    mkdirSync(join(fresh, "db"), { recursive: true });
    expect(legacyMongoDataNotice(fresh)).toBeNull();
    const used = freshDir();
    await (await start(used)).stop();
    expect(legacyMongoDataNotice(used)).toBeNull();
  });
});

/** Reads JSON lines one at a time; fails with what was seen when the stream ends first. */
function lineReader(lines: ReturnType<typeof createInterface>): () => Promise<Record<string, unknown>> {
  const iterator = lines[Symbol.asyncIterator]();
  return async () => {
    const { value, done } = await iterator.next();
    if (done) throw new Error("the child process ended before answering");
    return JSON.parse(value as string) as Record<string, unknown>;
  };
}

function killed(proc: ChildProcessWithoutNullStreams): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  proc.kill("SIGKILL");
  return new Promise((done) => proc.once("exit", () => done()));
}
