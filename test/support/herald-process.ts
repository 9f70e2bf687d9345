import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PATIENCE_MS } from "./patience.ts";
import { runtimeBin } from "./runtimes.ts";

export type Runtime = "node" | "bun" | "deno";

const ALL_RUNTIMES: Runtime[] = ["node", "bun", "deno"];

/**
 * The runtimes a test that runs Herald on each of them covers: all three, or those HERALD_TEST_RUNTIMES
 * names (comma-separated). CI's runtime matrix runs the runtime-sensitive suites again under Node 22 with
 * HERALD_TEST_RUNTIMES=node: Bun and Deno are the same whichever Node runs vitest.
 */
export function testRuntimes(): Runtime[] {
  const named = process.env.HERALD_TEST_RUNTIMES;
  if (!named) return ALL_RUNTIMES;
  const list = named.split(",").map((r) => r.trim());
  const unknown = list.filter((r) => !ALL_RUNTIMES.includes(r as Runtime));
  if (unknown.length > 0) {
    throw new Error(`HERALD_TEST_RUNTIMES names ${unknown.join(", ")}: use node, bun, deno`);
  }
  return list as Runtime[];
}

const ROOT = resolve(import.meta.dirname, "../..");

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

export interface HeraldProcess {
  baseUrl: string;
  port: number;
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then waits for exit; resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
  /** SIGKILL: a crash. */
  kill(): Promise<void>;
}

export interface StartOptions {
  runtime?: Runtime;
  env?: Record<string, string>;
  port?: number;
  /** How long to wait for /healthz. */
  readyTimeoutMs?: number;
}

function command(runtime: Runtime): [string, string[]] {
  switch (runtime) {
    case "node":
      // Node runs the TypeScript itself (type stripping), as `npm start` does: Herald is this very
      // process, so a SIGKILL reaches it and not a wrapper.
      return [process.execPath, [join(ROOT, "src/main/main.node.ts")]];
    case "bun":
      return [runtimeBin("bun"), [join(ROOT, "src/main/main.bun.ts")]];
    case "deno":
      return [
        runtimeBin("deno"),
        ["run", "--allow-all", "--node-modules-dir=manual", join(ROOT, "src/main/main.deno.ts")],
      ];
  }
}

/**
 * The test run's environment without its database settings: the run's DATABASE_URL or MONGODB_URI
 * (CI sets both) must not reach a Herald process, which would refuse both set, or use a database its
 * test did not choose. A process gets the database its test names in `env`.
 */
function withoutDatabase(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { DATABASE_URL: _d, MONGODB_URI: _m, MONGODB_DB: _n, HERALD_STORE: _s, ...rest } = env;
  return rest;
}

/** Starts a real Herald process on loopback and waits (with a deadline) until it answers /healthz. */
export async function startHerald(options: StartOptions = {}): Promise<HeraldProcess> {
  const runtime = options.runtime ?? "node";
  const port = options.port ?? (await freePort());
  const [cmd, args] = command(runtime);
  let out = "";
  // A data dir of its own unless the test shares one between processes; removed once the process exits.
  const ownDataDir = options.env?.HERALD_DATA_DIR ? null : mkdtempSync(join(tmpdir(), "herald-data-"));
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: {
      ...withoutDatabase(process.env),
      HOST: "127.0.0.1",
      PORT: String(port),
      ...(ownDataDir ? { HERALD_DATA_DIR: ownDataDir } : {}),
      HERALD_LOG_LEVEL: "warn",
      HERALD_ALLOW_PRIVATE_NETWORKS: "true",
      // Tests drive one token far beyond the default 100/s; test/adapters/http/rate-limit.test.ts and
      // test/adapters/http/api/limits-process.test.ts cover the limit.
      HERALD_RATE_LIMIT: "off",
      HERALD_PUBLISH_RATE_LIMIT: "off",
      DENO_NO_UPDATE_CHECK: "1",
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((r) =>
    child.once("exit", (code) => {
      if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
      r(code);
    }),
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? PATIENCE_MS);
  let ready = false;
  // A process killed by a signal has no exit code, only its signal: either ends the wait.
  while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
    try {
      const r = await fetch(`${baseUrl}/healthz`);
      if (r.ok) {
        ready = true;
        break;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!ready) {
    child.kill("SIGKILL");
    const ended =
      child.exitCode !== null
        ? ` (exited ${child.exitCode})`
        : child.signalCode
          ? ` (killed by ${child.signalCode})`
          : "";
    throw new Error(`Herald (${runtime}) did not become healthy${ended}:\n${out}`);
  }
  return {
    baseUrl,
    port,
    child,
    output: () => out,
    async stop(timeoutMs = 30_000) {
      if (child.exitCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await exited;
    },
  };
}
