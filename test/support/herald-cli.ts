import { spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { PATIENCE_MS } from "./patience.ts";

const ROOT = resolve(import.meta.dirname, "../..");

/** A fixed master key (32 bytes, base64) for test servers and the CLI. */
export const TEST_MASTER_KEY = Buffer.alloc(32, 7).toString("base64");

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface RunOptions {
  /** The whole environment of the child (nothing is inherited but PATH and HOME). */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Killed with SIGKILL after this long; the result then has `signal` set. */
  timeoutMs?: number;
}

/**
 * Runs a command to completion with a deadline and collects its output. The child sees only PATH,
 * HOME and `env`, so a MONGODB_URI of the test run never leaks into a case that must not have one.
 */
export function run(cmd: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const started = Date.now();
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
  for (const [k, v] of Object.entries(options.env ?? {})) if (v !== undefined) env[k] = v;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd: options.cwd ?? ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? PATIENCE_MS);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** `herald <args>` as `npm run cli` runs it: Node over src/cli/main.ts. */
export function herald(args: string[], env: Record<string, string | undefined>, timeoutMs = PATIENCE_MS) {
  return run(process.execPath, [join(ROOT, "src/cli/main.ts"), ...args], {
    env,
    timeoutMs,
  });
}

/** `herald <args>` through the package's bin file, run with node. */
export function heraldBin(args: string[], env: Record<string, string | undefined>, cwd?: string) {
  return run(process.execPath, [join(ROOT, "bin/herald.mjs"), ...args], { env, ...(cwd ? { cwd } : {}) });
}

/** The lines of a text, without the empty last one. */
export function lines(text: string): string[] {
  const all = text.split("\n");
  if (all.at(-1) === "") all.pop();
  return all;
}

export interface IssuedByCli {
  token: string;
  tenant_id: string;
  project_id: string;
}

/** Parses `tokens create --json` stdout, insisting on exactly one JSON object on one line and nothing else. */
export function parseCreated(result: RunResult): IssuedByCli {
  if (result.code !== 0) {
    throw new Error(`tokens create exited ${result.code ?? result.signal}: ${result.stderr}${result.stdout}`);
  }
  const out = lines(result.stdout);
  if (out.length !== 1)
    throw new Error(`tokens create --json printed ${out.length} lines:\n${result.stdout}`);
  const parsed = JSON.parse(out[0]!) as unknown;
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`tokens create --json did not print an object: ${out[0]}`);
  }
  return parsed as IssuedByCli;
}

export interface ListedToken {
  id: string;
  prefix: string;
  name: string | null;
  tenant_id: string;
  project_id: string;
  created_at: string;
  revoked_at: string | null;
}

/** The token record of `tokens list --json` whose prefix the token starts with. */
export function findListed(list: ListedToken[], token: string): ListedToken | undefined {
  return list.find((t) => token.startsWith(t.prefix.replace(/…$/, "")));
}
