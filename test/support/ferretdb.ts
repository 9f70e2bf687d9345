import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { stablePort } from "./stable-port.ts";

/**
 * A FerretDB process of a test's own (SQLite backend, files in a temporary directory), for tests that
 * stop and start the database. Never the run's shared database. The binary is HERALD_FERRETDB_BIN
 * (.ci/run exports the one it built), else CI's cache path; `ferretdbBinary()` answers null when
 * neither exists, and such tests skip.
 */
export function ferretdbBinary(): string | null {
  const given = process.env.HERALD_FERRETDB_BIN;
  if (given) return existsSync(given) ? given : null;
  const cached = join(homedir(), ".cache", "herald-ci", "ferretdb-v1.24.0");
  return existsSync(cached) ? cached : null;
}

export interface OwnFerretDb {
  port: number;
  uri: string;
  readonly running: boolean;
  /** Starts the process (again) on the same port and files; resolves once the port accepts connections. */
  start(): Promise<void>;
  /** Sends `signal` and waits for the process to exit. */
  stop(signal: "SIGTERM" | "SIGKILL"): Promise<void>;
  /** Stops the process and removes its files. */
  close(): Promise<void>;
  output(): string;
}

export async function startOwnFerretDb(binary: string): Promise<OwnFerretDb> {
  // Outside the ephemeral range, so nothing else takes the port while the database is stopped.
  const port = await stablePort();
  const dir = mkdtempSync(join(tmpdir(), "herald-ferretdb-"));
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let out = "";
  const accepts = () =>
    new Promise<boolean>((res) => {
      const s = connect(port, "127.0.0.1");
      s.once("connect", () => {
        s.destroy();
        res(true);
      });
      s.once("error", () => res(false));
    });
  const db: OwnFerretDb = {
    port,
    uri: `mongodb://127.0.0.1:${port}/`,
    get running() {
      return child !== null;
    },
    async start() {
      if (child) return;
      const c = spawn(
        binary,
        [
          "--handler=sqlite",
          `--sqlite-url=file:${dir}/`,
          `--listen-addr=127.0.0.1:${port}`,
          `--state-dir=${dir}`,
          "--telemetry=disable",
          "--debug-addr=-",
          "--log-level=error",
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      c.stdout?.on("data", (d) => {
        out += d;
      });
      c.stderr?.on("data", (d) => {
        out += d;
      });
      child = c;
      exited = new Promise((r) =>
        c.once("exit", () => {
          if (child === c) child = null;
          r();
        }),
      );
      // A process start is not something the test measures: wait for the port as long as it takes,
      // unless the process exits first.
      while (!(await accepts())) {
        if (child !== c) throw new Error(`FerretDB exited at start:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      // Something else answering on the port while our process failed to bind would look like a return.
      await new Promise((r) => setTimeout(r, 200));
      if (child !== c) throw new Error(`FerretDB exited at start (port ${port} taken?):\n${out}`);
    },
    async stop(signal) {
      const c = child;
      if (!c) return;
      c.kill(signal);
      await exited;
    },
    async close() {
      await db.stop("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
    output: () => out,
  };
  await db.start();
  return db;
}
