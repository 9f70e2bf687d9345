import { execFile, spawn, spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { stablePort } from "./stable-port.ts";

const ROOT = resolve(import.meta.dirname, "../..");

/** The path of an executable on PATH, or null. */
export function onPath(command: string): string | null {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Whether scripts/postgres.sh can start a cluster here from the machine's binaries, as it looks for
 * them (Debian's /usr/lib/postgresql/N/bin, else initdb and pg_ctl on PATH), without installing any.
 */
export function postgresBinaries(): boolean {
  let debian = false;
  try {
    debian = readdirSync("/usr/lib/postgresql").some((v) =>
      existsSync(`/usr/lib/postgresql/${v}/bin/initdb`),
    );
  } catch {
    // not Debian's layout
  }
  if (!debian && !(onPath("initdb") && onPath("pg_ctl"))) return false;
  // As root the server runs as the `postgres` OS user (PostgreSQL refuses to run as root).
  return process.getuid?.() !== 0 || spawnSync("id", ["-u", "postgres"]).status === 0;
}

/** Runs a script of scripts/, answering its stdout; rejects with its stderr. */
export function runScript(name: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      join(ROOT, "scripts", name),
      args,
      { env: { ...process.env, ...env }, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`scripts/${name} ${args.join(" ")}: ${stderr.trim() || error.message}`));
        else resolvePromise(stdout);
      },
    );
  });
}

/**
 * Runs `scripts/<script> stop <state>` once the process `pid` is gone, so that a test run killed before
 * its teardown (Ctrl-C twice, a SIGKILL, a closed pipe) leaves no server behind: the servers the scripts
 * start are daemons that outlive it. Answers a function that cancels the watch, for a teardown that
 * stopped the server itself (a later run could be given the same state directory's name).
 */
export function stopWhenGone(pid: number, script: string, state: string): () => void {
  const watcher = spawn(
    "bash",
    [
      "-c",
      'while kill -0 "$0" 2>/dev/null; do sleep 1; done; exec "$1" stop "$2" >/dev/null 2>&1',
      String(pid),
      join(ROOT, "scripts", script),
      state,
    ],
    { detached: true, stdio: "ignore" },
  );
  watcher.unref();
  return () => {
    watcher.kill();
  };
}

/** The value that `scripts/<x>.sh start` prints as `export NAME=value`. */
export function exported(stdout: string, name: string): string {
  const m = new RegExp(`^export ${name}=(\\S+)$`, "m").exec(stdout);
  if (!m?.[1]) throw new Error(`no ${name} in: ${stdout}`);
  return m[1];
}

export interface OwnPostgres {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  readonly running: boolean;
  /** Starts the cluster again on the same port and files (crash recovery first after an immediate stop). */
  start(): Promise<void>;
  /**
   * Stops the server: "immediate" aborts every backend at once with no checkpoint (a crash, as far as
   * the data is concerned), "fast" disconnects the clients and shuts down cleanly.
   */
  stop(mode: "immediate" | "fast"): Promise<void>;
  /** Stops the server and removes its files. */
  close(): Promise<void>;
  /** The server's log. */
  log(): string;
}

/**
 * A PostgreSQL cluster of a test's own (scripts/postgres.sh --durable), for tests that stop and start the
 * database; never the run's shared server. Durable: with synchronous_commit off, an immediate stop would
 * lose the last commits still in the server's WAL buffers, which a test of "nothing accepted is lost"
 * must not blame on Herald. On a port outside the ephemeral range, so nothing takes it while it is down.
 */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const state = mkdtempSync(join(tmpdir(), "herald-own-pg-"));
  const port = await stablePort();
  let url: string;
  try {
    url = exported(
      await runScript("postgres.sh", ["start", state, "--durable"], {
        POSTGRES_PORT: String(port),
        POSTGRES_INSTALL: "no",
      }),
      "DATABASE_URL",
    );
  } catch (e) {
    rmSync(state, { recursive: true, force: true });
    throw e;
  }
  const unwatch = stopWhenGone(process.pid, "postgres.sh", state);
  const bin = readFileSync(join(state, "pg_bin"), "utf8").trim();
  // PostgreSQL refuses to run as root: as root, pg_ctl runs as the cluster's owner.
  const pgCtl = (args: string[]) =>
    process.getuid?.() === 0
      ? run("runuser", ["-u", "postgres", "--", join(bin, "pg_ctl"), ...args])
      : run(join(bin, "pg_ctl"), args);
  let running = true;
  return {
    port,
    url,
    get running() {
      return running;
    },
    async start() {
      if (running) return;
      await pgCtl(["-D", join(state, "data"), "-l", join(state, "postgres.log"), "-w", "-t", "600", "start"]);
      running = true;
    },
    async stop(mode) {
      if (!running) return;
      await pgCtl(["-D", join(state, "data"), "-m", mode, "-w", "-t", "600", "stop"]);
      running = false;
    },
    async close() {
      await runScript("postgres.sh", ["stop", state]).catch(() => {});
      unwatch();
      running = false;
      rmSync(state, { recursive: true, force: true });
    },
    log() {
      try {
        return readFileSync(join(state, "postgres.log"), "utf8");
      } catch {
        return "";
      }
    },
  };
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    execFile(cmd, args, (error, _stdout, stderr) => {
      if (error) reject(new Error(`${cmd} ${args.join(" ")}: ${stderr.trim() || error.message}`));
      else resolvePromise();
    });
  });
}
