import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { exported, onPath, postgresBinaries, runScript, stopWhenGone } from "./postgres-server.ts";

/**
 * The run's database servers, one of each for the whole run; each test file then makes a database of
 * its own on them (test/support/postgres.ts, mongo.ts, store.ts).
 *
 * PostgreSQL (`postgresUrl`, a server URL whose database `postgres` takes CREATE DATABASE): DATABASE_URL
 * when set; else a cluster started for the run from the machine's PostgreSQL binaries by
 * scripts/postgres.sh; else "" and every test file starts an embedded PostgreSQL of its own (PGlite),
 * as it does everywhere with HERALD_TEST_POSTGRES=embedded.
 *
 * MongoDB (`mongoUri`), for the Mongo adapter's tests: MONGODB_URI when set; else a mongod that is
 * already on the machine, through mongodb-memory-server (never a download); else FerretDB started by
 * scripts/ferretdb.sh when it is built or `go` can build it (minutes, once per machine). With none of
 * these, `mongoUri` is "" and `mongoUnavailable` the one line that the tests needing MongoDB fail with;
 * every other test runs.
 *
 * And a scratch directory for the run's throwaway files (`scratchDir`, runScratch below).
 *
 * Everything started here is stopped at teardown, or, when the run is killed before it, by a watcher
 * that outlives the run (stopWhenGone).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const scratch = runScratch();
  project.provide("scratchDir", scratch.dir);
  const [postgres, mongo] = await Promise.all([runPostgres(), runMongo()]);
  project.provide("postgresUrl", postgres.url);
  project.provide("mongoUri", mongo.uri);
  project.provide("mongoUnavailable", mongo.unavailable);
  return async () => {
    await Promise.allSettled([postgres.stop(), mongo.stop()]);
    scratch.remove();
  };
}

interface Started {
  stop(): Promise<void>;
}

const nothingToStop = async () => {};

function note(message: string): void {
  process.stderr.write(`global setup: ${message}\n`);
}

/** A state directory for a script's server; PostgreSQL's own user must reach it when run as root. */
function stateDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * The run's scratch directory (`scratchDir`): test files make their throwaway files below it
 * (test/support/tls.ts's certificates), as they cannot remove them themselves: vitest ends its workers
 * without their exit handlers. Removed at teardown, or, when the run is killed before it, by a watcher
 * once this process is gone.
 */
export function runScratch(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "herald-test-run-"));
  const watcher = spawn(
    "bash",
    ["-c", 'while kill -0 "$0" 2>/dev/null; do sleep 1; done; rm -rf "$1"', String(process.pid), dir],
    { detached: true, stdio: "ignore" },
  );
  watcher.unref();
  return {
    dir,
    remove() {
      watcher.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function runPostgres(): Promise<Started & { url: string }> {
  const given = process.env.DATABASE_URL;
  if (given) return { url: given, stop: nothingToStop };
  // HERALD_TEST_POSTGRES=embedded: what a machine without PostgreSQL binaries runs, on any machine.
  if (process.env.HERALD_TEST_POSTGRES === "embedded") return { url: "", stop: nothingToStop };
  if (postgresBinaries()) {
    const state = stateDir("herald-test-pg-");
    try {
      // Only the machine's binaries: the tests never install anything.
      const out = await runScript("postgres.sh", ["start", state], { POSTGRES_INSTALL: "no" });
      const unwatch = stopWhenGone(process.pid, "postgres.sh", state);
      return {
        url: exported(out, "DATABASE_URL"),
        stop: async () => {
          await runScript("postgres.sh", ["stop", state]).catch((e: Error) => note(e.message));
          unwatch();
        },
      };
    } catch (e) {
      note(`${(e as Error).message}; the tests use the embedded PostgreSQL instead`);
      rmSync(state, { recursive: true, force: true });
    }
  }
  return { url: "", stop: nothingToStop };
}

async function runMongo(): Promise<Started & { uri: string; unavailable: string }> {
  const given = process.env.MONGODB_URI;
  if (given) return { uri: given, unavailable: "", stop: nothingToStop };
  const mongod = await startMongod();
  if (mongod) return { ...mongod, unavailable: "" };
  const ferret = await startFerretDb();
  if (ferret) return { ...ferret, unavailable: "" };
  return {
    uri: "",
    unavailable:
      "No MongoDB for the Mongo adapter's tests: set MONGODB_URI to a MongoDB 7+ or FerretDB server on loopback, put mongod on PATH (or MONGOMS_SYSTEM_BINARY), or install Go so scripts/ferretdb.sh can build FerretDB.",
    stop: nothingToStop,
  };
}

/** A mongod through mongodb-memory-server, only from a binary already on this machine. */
async function startMongod(): Promise<(Started & { uri: string }) | null> {
  const { DryMongoBinary, MongoMemoryServer } = await import("mongodb-memory-server");
  let binary: string | undefined;
  try {
    binary = onPath("mongod") ?? (await DryMongoBinary.locateBinary({ version: "" }));
  } catch (e) {
    note(`no usable mongod (${(e as Error).message})`);
    return null;
  }
  if (!binary) return null;
  try {
    const server = await MongoMemoryServer.create({
      instance: { ip: "127.0.0.1" },
      binary: { systemBinary: binary },
    });
    return { uri: server.getUri(), stop: async () => void (await server.stop()) };
  } catch (e) {
    note(`mongod at ${binary} did not start (${(e as Error).message})`);
    return null;
  }
}

/** FerretDB by scripts/ferretdb.sh, when it is built already or `go` can build it. */
async function startFerretDb(): Promise<(Started & { uri: string }) | null> {
  const built = existsSync(
    process.env.FERRETDB_BIN ?? join(homedir(), ".cache", "herald-ci", "ferretdb-v1.24.0"),
  );
  if (!built && !onPath("go")) return null;
  if (!built)
    note(
      "no mongod here: building FerretDB with go for the Mongo adapter's tests (minutes, once per machine)",
    );
  const state = stateDir("herald-test-ferretdb-");
  try {
    const out = await runScript("ferretdb.sh", ["start", state], { POSTGRES_INSTALL: "no" });
    const unwatch = stopWhenGone(process.pid, "ferretdb.sh", state);
    return {
      uri: exported(out, "MONGODB_URI"),
      stop: async () => {
        await runScript("ferretdb.sh", ["stop", state]).catch((e: Error) => note(e.message));
        unwatch();
      },
    };
  } catch (e) {
    note((e as Error).message);
    rmSync(state, { recursive: true, force: true });
    return null;
  }
}
