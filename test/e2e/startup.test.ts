import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { herald, lines, parseCreated, run, TEST_MASTER_KEY } from "../support/herald-cli.ts";
import { freePort, type HeraldProcess, type Runtime, startHerald } from "../support/herald-process.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { runtimeBin } from "../support/runtimes.ts";
import { freshStore } from "../support/store.ts";

// How Herald starts and stops as a process: configuration errors, health, graceful stop, on the run's
// PostgreSQL (DATABASE_URL), and the embedded PostgreSQL of `npm start` with no database configured.

const ROOT = resolve(import.meta.dirname, "../..");
const RUNTIMES: Runtime[] = ["node", "bun", "deno"];

function entry(runtime: Runtime): [string, string[]] {
  switch (runtime) {
    case "node":
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

const store = await freshStore("herald_startup");
const tmpDirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "herald-startup-"));
  tmpDirs.push(d);
  return d;
};

/** A valid environment for a server that must not get far enough to listen on 8080 by accident. */
const baseEnv = (): Record<string, string> => ({
  ...store.env,
  HERALD_MASTER_KEY: TEST_MASTER_KEY,
  HERALD_DATA_DIR: tempDir(),
  HOST: "127.0.0.1",
  HERALD_LOG_LEVEL: "warn",
  DENO_NO_UPDATE_CHECK: "1",
});

afterAll(async () => {
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
  await store.cleanup();
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
      [
        { DATABASE_URL: "mysql://127.0.0.1:3306/herald" },
        /^herald: DATABASE_URL must start with postgres:\/\/ or postgresql:\/\//,
      ],
      // DATABASE_URL "" counts as unset.
      [
        { DATABASE_URL: "", MONGODB_URI: "http://127.0.0.1:27017/" },
        /^herald: MONGODB_URI must start with mongodb:\/\//,
      ],
      // Two databases: Herald will not guess which one holds the data.
      [
        { MONGODB_URI: "mongodb://127.0.0.1:27017/" },
        /^herald: DATABASE_URL and MONGODB_URI are both set\b.*unset one/,
      ],
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
    // Fails fast: within the 3 s connection deadline Herald sets, not a driver's default 30 s. The bound
    // scales with this machine's pace: twice what a start that fails before connecting takes, plus 10 s.
    const baseline = await start({ ...baseEnv(), PORT: port, HERALD_MASTER_KEY: "short" });
    expectStopped(baseline, 2, /HERALD_MASTER_KEY/);
    const [postgres, mongo] = await Promise.all([
      start({ ...baseEnv(), PORT: port, DATABASE_URL: "postgres://postgres@127.0.0.1:9/herald" }),
      start({ ...baseEnv(), PORT: port, DATABASE_URL: "", MONGODB_URI: "mongodb://127.0.0.1:9/" }),
    ]);
    for (const r of [postgres, mongo])
      expectStopped(r, 1, /^herald: could not start: the database is unreachable$/, 2 * baseline.ms + 10_000);
  });

  it("answers /healthz and /readyz with 200, and stops on SIGTERM with exit code 0", async () => {
    const server = await startHerald({ runtime, env: store.env });
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
    const server = await startHerald({ runtime, env: store.env });
    const exited = new Promise<number | null>((r) => server.child.once("exit", (code) => r(code)));
    server.child.kill("SIGINT");
    const timer = setTimeout(() => server.child.kill("SIGKILL"), PATIENCE_MS);
    const code = await exited;
    clearTimeout(timer);
    expect(code).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------------
// Embedded mode: neither DATABASE_URL nor MONGODB_URI (startHerald never passes the run's own on).

describe("embedded PostgreSQL: no database configured", () => {
  it("a data directory holding an earlier version's embedded MongoDB stops the start with one line saying how to keep it", async () => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, "db"));
    writeFileSync(join(dataDir, "db", "WiredTiger"), "WiredTiger\n");
    writeFileSync(join(dataDir, "db", "collection-0-1.wt"), "");
    const [cmd, args] = entry("node");
    const r = await run(cmd, args, { env: { HERALD_DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1" } });
    expectStopped(
      r,
      1,
      new RegExp(
        `^herald: ${join(dataDir, "db").replaceAll("/", "\\/")} holds the MongoDB files.*MONGODB_URI`,
      ),
    );
    // Nothing was made beside it.
    expect(readdirSync(dataDir).sort()).toEqual(["db"]);
  });

  it("prints a token on the first start only, the CLI finds the running server's database, and data outlives a restart", async () => {
    const dataDir = tempDir();
    const env = { HERALD_DATA_DIR: dataDir, HERALD_LOG_LEVEL: "warn" };
    const first = await startHerald({ runtime: "node", env });
    let token: string;
    let webhookId: string;
    try {
      const printed = await waitForOutput(
        first,
        /first API token[^\n]*?(hrld_[A-Za-z0-9_-]{43})/,
        PATIENCE_MS,
      );
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
      expect(await first.stop(PATIENCE_MS)).toBe(0);
    }

    // With no server running, the CLI opens the same files itself.
    const offline = parseCreated(await herald(["tokens", "create", "--json"], { HERALD_DATA_DIR: dataDir }));

    const second = await startHerald({ runtime: "node", env });
    try {
      const res = await fetch(`${second.baseUrl}/api/v1/webhooks/${webhookId}`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      const withOffline = await fetch(`${second.baseUrl}/api/v1/webhooks`, {
        headers: { Authorization: `Bearer ${offline.token}` },
      });
      expect(withOffline.status).toBe(200);
      expect(second.output()).not.toMatch(/first API token/);
    } finally {
      expect(await second.stop(PATIENCE_MS)).toBe(0);
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
