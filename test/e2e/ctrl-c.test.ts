import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock, systemIds } from "../../src/adapters/system.ts";
import type { Repositories } from "../../src/app/ports/store.ts";
import { tokenUseCases } from "../../src/app/tokens.ts";
import { SAME_STOP_WITHIN_MS } from "../../src/main/signals.ts";
import { freePort, type Runtime, testRuntimes } from "../support/herald-process.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type FreshStore, freshStore } from "../support/store.ts";
import { until } from "../support/until.ts";
import { eventBody } from "./delivery-support.ts";

// Ctrl-C on `npm start` in a real terminal (issue 26, ADR 28). The terminal's ^C signals the whole
// foreground process group, npm and Herald, and npm passes its SIGINT on to Herald too: one key press,
// two signals a few milliseconds apart. The test runs npm in a pseudo-terminal of util-linux's `script`
// and types ^C into it, so the terminal's line discipline sends the signals exactly as a person's
// terminal does. Each Ctrl-C must stop Herald cleanly (exit 0, `stopped`, its shards given back); a
// second Ctrl-C after SAME_STOP_WITHIN_MS still means "now", and even then the shards go back.

const ROOT = resolve(import.meta.dirname, "../..");
/** The PATH as the machine has it (npm puts node_modules/.bin first on the scripts' own). */
const MACHINE_PATH = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((dir) => !/[\\/]node_modules[\\/]\.bin$/.test(dir))
  .join(delimiter);
const SCRIPT: Record<Runtime, string> = { node: "start", bun: "start:bun", deno: "start:deno" };
/** Clean stops in a row on Node (the issue saw 6 of 9 fail); once on Bun and Deno. */
const ROUNDS = Number(process.env.HERALD_CTRL_C_ROUNDS ?? 5);

interface InTerminal {
  baseUrl: string;
  child: ChildProcess;
  output(): string;
  ctrlC(): void;
  exited: Promise<number | null>;
}

let store: FreshStore;
let repos: Repositories;
let token: string;
const dataDir = mkdtempSync(join(tmpdir(), "herald-ctrl-c-"));

beforeAll(async () => {
  store = await freshStore("herald_ctrl_c");
  repos = await store.connect();
  token = (
    await tokenUseCases({ tokens: repos.tokens, clock: systemClock, ids: systemIds }).create({
      name: "ctrl-c",
    })
  ).token;
});

afterAll(async () => {
  await store?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

/** `npm run <script>` in a pseudo-terminal; resolves once Herald answers /healthz. */
async function inTerminal(runtime: Runtime): Promise<InTerminal> {
  const port = await freePort();
  const child = spawn("script", ["-qfec", `exec npm run ${SCRIPT[runtime]}`, "/dev/null"], {
    cwd: ROOT,
    env: {
      PATH: MACHINE_PATH,
      HOME: process.env.HOME,
      TERM: "xterm",
      HOST: "127.0.0.1",
      PORT: String(port),
      ...store.env,
      HERALD_DATA_DIR: dataDir,
      HERALD_LOG_LEVEL: "debug",
      HERALD_ALLOW_HTTP_URLS: "true",
      HERALD_ALLOW_PRIVATE_NETWORKS: "true",
      DENO_NO_UPDATE_CHECK: "1",
    },
    stdio: ["pipe", "pipe", "pipe"],
    // A process group of its own, so that a failing run can still remove whatever it left behind.
    detached: true,
  });
  let out = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  await until(
    async () => {
      if (child.exitCode !== null) throw new Error(`npm exited ${child.exitCode} before answering:\n${out}`);
      return (await fetch(`${baseUrl}/healthz`).catch(() => null))?.ok === true;
    },
    () => `Herald under npm answers /healthz; output:\n${out}`,
    { everyMs: 100 },
  );
  return {
    baseUrl,
    child,
    output: () => out,
    // What a terminal does with the key: its line discipline signals the foreground process group.
    ctrlC: () => child.stdin?.write("\x03"),
    exited,
  };
}

function cleanUp(t: InTerminal | null): void {
  try {
    if (t?.child.pid) process.kill(-t.child.pid, "SIGKILL");
  } catch {
    // the group is gone: nothing was left behind
  }
}

/** Log lines with this message, parsed (the terminal ends lines with \r\n). */
function lines(output: string, msg: string): Record<string, unknown>[] {
  return output
    .split(/\r?\n/)
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l.slice(l.indexOf("{"))) as Record<string, unknown>);
}

/** Shard leases whose owner still holds them. */
async function heldLeases(): Promise<number> {
  return (await repos.shards.heads()).filter((l) => l.expiresAt.getTime() > Date.now()).length;
}

describe("Ctrl-C on `npm start` in a terminal", () => {
  for (const runtime of testRuntimes()) {
    const rounds = runtime === "node" ? ROUNDS : 1;
    it(
      `${runtime}: one Ctrl-C stops cleanly, ${rounds} times of ${rounds}: exit 0, stopped, shards given back`,
      async () => {
        for (let round = 1; round <= rounds; round++) {
          let t: InTerminal | null = null;
          try {
            t = await inTerminal(runtime);
            await until(async () => (await heldLeases()) > 0, "the process holds its shards");
            t.ctrlC();
            const code = await t.exited;
            const out = t.output();
            expect(code, `round ${round}: exit code; output:\n${out}`).toBe(0);
            expect(lines(out, "stopping"), `round ${round}: one stop`).toHaveLength(1);
            expect(lines(out, "stopping at once"), `round ${round}: never "now"`).toEqual([]);
            expect(lines(out, "stopped"), `round ${round}: stopped`).toHaveLength(1);
            expect(await heldLeases(), `round ${round}: every shard given back`).toBe(0);
          } finally {
            cleanUp(t);
          }
        }
      },
      rounds * PATIENCE_MS,
    );
  }

  it(
    "a second Ctrl-C a moment later means now: exit 1 at once, and the shards are given back all the same",
    async () => {
      let t: InTerminal | null = null;
      let receiver: Receiver | null = null;
      try {
        // A delivery that never ends holds the graceful stop for its grace (the delivery timeout and more).
        receiver = await startReceiver({ secrets: [], behaviour: { kind: "hang" } });
        t = await inTerminal("node");
        const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
        const created = await fetch(`${t.baseUrl}/api/v1/webhooks`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ url: receiver.url, events: ["message.delivered"] }),
        });
        expect(created.status).toBe(201);
        const published = await fetch(`${t.baseUrl}/api/v1/events`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify(eventBody("message.delivered")),
        });
        expect(published.status).toBe(202);
        await receiver.waitFor(1);
        const term = t;
        term.ctrlC();
        await until(() => lines(term.output(), "stopping").length === 1, "the first Ctrl-C starts the stop");
        await new Promise((r) => setTimeout(r, 3 * SAME_STOP_WITHIN_MS));
        // Still stopping: the delivery in flight holds it.
        expect(t.child.exitCode, t.output()).toBeNull();
        expect(lines(t.output(), "stopping at once")).toEqual([]);
        t.ctrlC();
        const code = await t.exited;
        const out = t.output();
        expect(code, out).toBe(1);
        expect(lines(out, "stopping at once"), out).toHaveLength(1);
        expect(lines(out, "stopped"), "not a graceful stop").toEqual([]);
        expect(await heldLeases(), "a stop at once gives its shards back too").toBe(0);
      } finally {
        cleanUp(t);
        await receiver?.close();
      }
    },
    PATIENCE_MS,
  );
});
