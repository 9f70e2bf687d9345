import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { downloadTarget, reachable } from "../../src/adapters/mongo/embedded.ts";
import { herald, lines, parseCreated, run, TEST_MASTER_KEY } from "../support/herald-cli.ts";
import { freePort, type HeraldProcess, type Runtime, startHerald } from "../support/herald-process.ts";
import { uniqueDbName } from "../support/mongo.ts";
import { PATIENCE_MS } from "../support/patience.ts";

// How Herald starts and stops as a process: configuration errors, health, graceful stop, and the
// embedded database of `npm start` without MONGODB_URI.

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = (name: string) => join(ROOT, "node_modules", ".bin", name);
const RUNTIMES: Runtime[] = ["node", "bun", "deno"];

function entry(runtime: Runtime): [string, string[]] {
  switch (runtime) {
    case "node":
      return [BIN("tsx"), [join(ROOT, "src/main/main.node.ts")]];
    case "bun":
      return [BIN("bun"), [join(ROOT, "src/main/main.bun.ts")]];
    case "deno":
      return [
        BIN("deno"),
        ["run", "--allow-all", "--node-modules-dir=manual", join(ROOT, "src/main/main.deno.ts")],
      ];
  }
}

const uri = inject("mongoUri");
const dbName = uniqueDbName("herald_startup");
const tmpDirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "herald-startup-"));
  tmpDirs.push(d);
  return d;
};

/** A valid environment for a server that must not get far enough to listen on 8080 by accident. */
const baseEnv = () => ({
  MONGODB_URI: uri,
  MONGODB_DB: dbName,
  HERALD_MASTER_KEY: TEST_MASTER_KEY,
  HERALD_DATA_DIR: tempDir(),
  HOST: "127.0.0.1",
  HERALD_LOG_LEVEL: "warn",
  DENO_NO_UPDATE_CHECK: "1",
});

afterAll(async () => {
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 3_000 });
  try {
    await client.db(dbName).dropDatabase();
  } finally {
    await client.close();
  }
});

/**
 * Exit code `code` and one line on stderr matching `line`. How long it took is not asserted (a busy
 * machine starts runtimes slowly), except where failing fast is the point (`withinMs`).
 */
function expectStopped(
  r: { code: number | null; signal: string | null; stderr: string; ms: number },
  code: number,
  line: RegExp,
  withinMs = Number.POSITIVE_INFINITY,
) {
  expect({ code: r.code, signal: r.signal, stderrLines: lines(r.stderr) }).toEqual({
    code,
    signal: null,
    stderrLines: [expect.stringMatching(line)],
  });
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.ms).toBeLessThan(withinMs);
}

describe.each(RUNTIMES)("start-up on %s", (runtime) => {
  const [cmd, args] = entry(runtime);
  const start = (env: Record<string, string>, timeoutMs = PATIENCE_MS) => run(cmd, args, { env, timeoutMs });

  it("a bad value stops the process with exit code 2 and one line naming the variable", async () => {
    const port = String(await freePort());
    const cases: [Record<string, string>, RegExp][] = [
      [{ PORT: "abc" }, /^herald: PORT must be a whole number .*"abc"/],
      [
        { HERALD_DELIVERY_TIMEOUT: "15" },
        /^herald: HERALD_DELIVERY_TIMEOUT must be a duration like 500ms.*"15"/,
      ],
      [{ HERALD_MASTER_KEY: "short" }, /^herald: HERALD_MASTER_KEY must be 32 bytes/],
      [{ MONGODB_URI: "http://127.0.0.1:27017/" }, /^herald: MONGODB_URI must start with mongodb:\/\//],
      [{ HERALD_ALLOW_HTTP_URLS: "maybe" }, /^herald: HERALD_ALLOW_HTTP_URLS must be true or false/],
    ];
    const results = await Promise.all(cases.map(([bad]) => start({ ...baseEnv(), PORT: port, ...bad })));
    results.forEach((r, i) => {
      expectStopped(r, 2, cases[i]![1]);
      expect(r.stdout).toBe("");
    });
  });

  it("a port already in use stops the process with exit code 1 and one line", async () => {
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    try {
      const { port } = taken.address() as { port: number };
      const r = await start({ ...baseEnv(), PORT: String(port) });
      expectStopped(r, 1, new RegExp(`^herald: cannot listen on 127\\.0\\.0\\.1:${port}: .*in use`));
      // It had already connected and started the dispatcher: stopping that again is quiet (at warn
      // level, a claim cut off by the closing store used to log "claiming due deliveries failed").
      expect(r.stdout).toBe("");
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });

  it("an unreachable database stops the process with exit code 1 and one line", async () => {
    const port = String(await freePort());
    // Fails fast: within the 3 s server selection Herald sets, not the driver's default 30 s. The bound
    // scales with this machine's pace: twice what a start that fails before connecting takes, plus 10 s.
    const baseline = await start({ ...baseEnv(), PORT: port, HERALD_MASTER_KEY: "short" });
    expectStopped(baseline, 2, /HERALD_MASTER_KEY/);
    const r = await start({ ...baseEnv(), PORT: port, MONGODB_URI: "mongodb://127.0.0.1:9/" });
    expectStopped(r, 1, /^herald: could not start: the database is unreachable$/, 2 * baseline.ms + 10_000);
  });

  it("answers /healthz and /readyz with 200, and stops on SIGTERM with exit code 0", async () => {
    const server = await startHerald({ runtime, env: { MONGODB_URI: uri, MONGODB_DB: dbName } });
    try {
      // A kept-alive connection from this client stays open across the stop.
      for (const path of ["/healthz", "/readyz"]) {
        const res = await fetch(`${server.baseUrl}${path}`);
        expect(res.status, path).toBe(200);
        expect(await res.json()).toEqual({ status: "ok" });
      }
    } finally {
      const code = await server.stop(PATIENCE_MS);
      expect({ code, output: code === 0 ? "" : server.output() }).toEqual({ code: 0, output: "" });
    }
  });

  it("stops on SIGINT with exit code 0 as well", async () => {
    const server = await startHerald({ runtime, env: { MONGODB_URI: uri, MONGODB_DB: dbName } });
    const exited = new Promise<number | null>((r) => server.child.once("exit", (code) => r(code)));
    server.child.kill("SIGINT");
    const timer = setTimeout(() => server.child.kill("SIGKILL"), PATIENCE_MS);
    const code = await exited;
    clearTimeout(timer);
    expect(code).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------------
// Embedded mode: no MONGODB_URI.

/** Whether mongodb-memory-server has a mongod to run without downloading one. */
function mongodBinaryAvailable(): boolean {
  if (process.env.MONGOMS_SYSTEM_BINARY) return true;
  const caches = [
    join(homedir(), ".cache", "mongodb-binaries"),
    join(ROOT, "node_modules", ".cache", "mongodb-memory-server"),
    process.env.MONGOMS_DOWNLOAD_DIR,
  ];
  return caches.some((dir) => dir && existsSync(dir) && readdirSync(dir).some((f) => f.startsWith("mongod")));
}

const binaryAvailable = mongodBinaryAvailable();

describe.skipIf(binaryAvailable)("embedded mode without a MongoDB binary", () => {
  /** Keeps a test on a machine that is online from downloading 100 MB: the mirror is a closed local port. */
  let offline: Record<string, string> = {};

  beforeAll(async () => {
    if (await reachable(downloadTarget(process.env), 3_000)) {
      offline = { MONGOMS_DOWNLOAD_MIRROR: `http://127.0.0.1:${await freePort()}` };
    }
  });

  const embeddedEnv = () => ({
    HERALD_DATA_DIR: tempDir(),
    PORT: "0",
    HOST: "127.0.0.1",
    DENO_NO_UPDATE_CHECK: "1",
    npm_config_update_notifier: "false",
    ...offline,
  });
  const MESSAGE = /^herald: No MongoDB binary could be found or downloaded .*set MONGODB_URI/;

  it("npm start stops with exit code 1 and one line telling the user to set MONGODB_URI", async () => {
    // npm's own warnings about the machine's npm config (e.g. an unknown user setting) are not Herald's
    // output: npm is asked for errors only, which it would still print.
    const r = await run("npm", ["start"], {
      env: { ...embeddedEnv(), npm_config_loglevel: "error" },
      timeoutMs: PATIENCE_MS,
    });
    expectStopped(r, 1, MESSAGE);
    expect(r.stdout).not.toMatch(/hrld_/);
  });

  it.each(RUNTIMES)("the %s entry point does the same", async (runtime) => {
    const [cmd, args] = entry(runtime);
    const r = await run(cmd, args, { env: embeddedEnv(), timeoutMs: PATIENCE_MS });
    expectStopped(r, 1, MESSAGE);
  });

  it("the CLI does the same", async () => {
    const r = await herald(["tokens", "create", "--json"], embeddedEnv());
    expectStopped(r, 1, MESSAGE);
    expect(r.stdout).toBe("");
  });
});

describe.runIf(binaryAvailable)("embedded mode with a MongoDB binary", () => {
  it("prints a token on the first start only, and keeps data across a restart", {
    timeout: 110_000,
  }, async () => {
    const dataDir = tempDir();
    // MONGODB_URI "" counts as unset (the test run's own MONGODB_URI must not reach the server).
    const env = { MONGODB_URI: "", HERALD_DATA_DIR: dataDir, HERALD_LOG_LEVEL: "warn" };
    const first = await startHerald({ runtime: "node", env, readyTimeoutMs: 45_000 });
    let token: string;
    let webhookId: string;
    try {
      const printed = await waitForOutput(first, /first API token[^\n]*?(hrld_[A-Za-z0-9_-]{43})/, 15_000);
      token = printed[1]!;
      const created = await fetch(`${first.baseUrl}/api/v1/webhooks`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ url: "https://receiver.invalid/persist", events: ["message.delivered"] }),
      });
      expect(created.status).toBe(201);
      webhookId = ((await created.json()) as { id: string }).id;
      // The CLI finds the running server's database through HERALD_DATA_DIR (CONTRACT §1).
      const issued = parseCreated(await herald(["tokens", "create", "--json"], { HERALD_DATA_DIR: dataDir }));
      const list = await fetch(`${first.baseUrl}/api/v1/webhooks`, {
        headers: { Authorization: `Bearer ${issued.token}` },
      });
      expect(list.status).toBe(200);
    } finally {
      expect(await first.stop(20_000)).toBe(0);
    }

    const second = await startHerald({ runtime: "node", env, readyTimeoutMs: 45_000 });
    try {
      const res = await fetch(`${second.baseUrl}/api/v1/webhooks/${webhookId}`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      expect(second.output()).not.toMatch(/first API token/);
    } finally {
      expect(await second.stop(20_000)).toBe(0);
    }
  });
});

/** Resolves with the match once the process output matches, or fails after `timeoutMs`. */
function waitForOutput(p: HeraldProcess, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  return new Promise((resolvePromise, reject) => {
    const check = () => {
      const m = p.output().match(pattern);
      if (!m) return;
      done();
      resolvePromise(m);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`output never matched ${pattern}:\n${p.output()}`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      p.child.stdout?.off("data", check);
    };
    // Registered after the harness's own listener, so output() already holds the new chunk.
    p.child.stdout?.on("data", check);
    check();
  });
}
