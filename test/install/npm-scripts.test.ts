import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { run } from "../support/herald-cli.ts";
import { freePort } from "../support/herald-process.ts";
import { freshStore } from "../support/store.ts";

// The npm scripts as a user and a supervisor run them: `npm start` must stop Herald when npm itself
// gets SIGTERM (a supervisor signals the process it started, which is npm), and npm must show its own
// errors (no loglevel=silent in .npmrc). `npm start` runs Herald on the Node the root carries (ADR 23)
// whatever Node the machine has: npm puts node_modules/.bin, where that Node's `node` is, first on the
// scripts' PATH.

const ROOT = resolve(import.meta.dirname, "../..");
const CARRIED = Object.values(
  (
    JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      optionalDependencies: Record<string, string>;
    }
  ).optionalDependencies,
)[0];
/** The PATH as the machine has it: without the node_modules/.bin that npm or npx put in front. */
const MACHINE_PATH = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((dir) => !/[\\/]node_modules[\\/]\.bin$/.test(dir))
  .join(delimiter);
const store = await freshStore("herald_npm_start");
const dataDir = mkdtempSync(join(tmpdir(), "herald-npm-start-"));

afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await store.cleanup();
});

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      res(true);
    });
    s.once("error", () => res(false));
  });
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("npm scripts", () => {
  it("`npm start` runs Herald on the carried Node; SIGTERM to npm stops it: npm exits 0, the port is free", async () => {
    const port = await freePort();
    const npm = spawn("npm", ["start"], {
      cwd: ROOT,
      env: {
        PATH: MACHINE_PATH,
        HOME: process.env.HOME,
        HOST: "127.0.0.1",
        PORT: String(port),
        ...store.env,
        HERALD_DATA_DIR: dataDir,
        HERALD_LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
      // A process group of its own, so that a failing run can still remove whatever npm left behind.
      detached: true,
    });
    let output = "";
    npm.stdout.setEncoding("utf8").on("data", (d: string) => {
      output += d;
    });
    npm.stderr.setEncoding("utf8").on("data", (d: string) => {
      output += d;
    });
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((r) =>
      npm.once("exit", (code, signal) => r([code, signal])),
    );
    try {
      await until(
        "Herald answers /healthz",
        async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok === true,
        120_000,
      );
      const started = output.split("\n").find((l) => l.includes('"msg":"herald listening"')) ?? output;
      expect(JSON.parse(started)).toMatchObject({ runtime: "node", runtime_version: CARRIED });
      npm.kill("SIGTERM");
      expect(await exited, output).toEqual([0, null]);
      expect(output).toMatch(/"msg":"stopping","signal":"SIGTERM"/);
      expect(output).toMatch(/"msg":"stopped"/);
      expect(await listening(port)).toBe(false);
    } finally {
      try {
        process.kill(-npm.pid!, "SIGKILL");
      } catch {
        // the group is gone: nothing was left behind
      }
    }
  }, 180_000);

  it("npm prints its own errors: a mistyped script name says so on stderr and exits non-zero", async () => {
    const r = await run("npm", ["run", "strat"], { timeoutMs: 60_000 });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Missing script: "strat"/);
  }, 90_000);

  it("`npm run -s cli -- --version` prints only the CLI's output (no npm banner)", async () => {
    const r = await run("npm", ["run", "-s", "cli", "--", "--version"], { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  }, 90_000);
});
