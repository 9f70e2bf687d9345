import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { deliveriesGroup } from "../../src/cli/deliveries.ts";
import { erasuresGroup, settingsGroup } from "../../src/cli/erasures.ts";
import { eventsGroup } from "../../src/cli/events.ts";
import { listenCommand } from "../../src/cli/listen.ts";
import { runCli } from "../../src/cli/main.ts";
import { webhooksGroup } from "../../src/cli/webhooks.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { cliHarness, recordingIo } from "./helpers.ts";

const GROUPS = [webhooksGroup, deliveriesGroup, eventsGroup, erasuresGroup, settingsGroup];
const COMMANDS = [...GROUPS.flatMap((g) => g.commands), listenCommand];
const BIN = fileURLToPath(new URL("../../bin/herald.mjs", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

async function run(argv: string[], env: Record<string, string | undefined> = {}) {
  const rec = recordingIo(env);
  const code = await runCli(argv, rec.io);
  return { code, out: rec.out, err: rec.err, stdout: rec.out.join("\n") };
}

describe("herald --help", () => {
  it("the top-level help lists every command", async () => {
    const { code, stdout, err } = await run(["--help"]);
    expect(code).toBe(0);
    expect(err).toEqual([]);
    expect(stdout).toMatch(/^Usage: npx herald <command> \[options\]/);
    const lines = stdout.split("\n");
    for (const c of COMMANDS) {
      const row = lines.find((l) => l.startsWith(`  ${c.name} `));
      expect(row, c.name).toBeDefined();
      expect(row!.slice(c.name.length + 2).trim()).toBe(c.summary);
    }
    expect(stdout).toContain("tokens create|list|revoke");
    expect(stdout).toContain("HERALD_URL");
    expect(stdout).toContain("HERALD_TOKEN");
    expect((await run([])).code).toBe(2);
    expect((await run(["help"])).stdout).toBe(stdout);
  });

  it.each(COMMANDS.map((c) => [c.name]))(
    "herald %s --help and -h print usage, options and an example",
    async (name) => {
      for (const flag of ["--help", "-h"]) {
        // No token needed for help.
        const { code, stdout, err } = await run([...name.split(" "), flag]);
        expect(code).toBe(0);
        expect(err).toEqual([]);
        expect(stdout).toMatch(new RegExp(`^Usage: npx herald ${name}`));
        expect(stdout).toContain("\nOptions:\n");
        expect(stdout).toMatch(/-h, --help +Show this help/);
        expect(stdout).toMatch(new RegExp(`\\nExamples?:\\n  npx herald ${name}`));
      }
      // --help wins over missing arguments and bad options.
      expect((await run([...name.split(" "), "--bogus", "--help"])).code).toBe(0);
      expect((await run(["help", ...name.split(" ")])).stdout).toMatch(
        new RegExp(`^Usage: npx herald ${name}`),
      );
    },
  );

  it.each(GROUPS.map((g) => [g.name]))("herald %s --help lists its commands", async (name) => {
    const group = GROUPS.find((g) => g.name === name)!;
    const help = await run([name, "--help"]);
    expect(help.code).toBe(0);
    for (const c of group.commands) {
      expect(help.stdout).toMatch(new RegExp(`^  ${c.name.split(" ")[1]} +`, "m"));
    }
    const bare = await run([name]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe(help.stdout);
  });
});

describe("herald usage and connection errors", () => {
  it("an unknown command or option is one line on stderr, exit 2", async () => {
    for (const argv of [
      ["nope"],
      ["webhooks", "nope"],
      ["webhooks", "list", "--bogus"],
      ["webhooks", "get"],
    ]) {
      const { code, out, err } = await run(argv, { HERALD_TOKEN: "hrld_x" });
      expect(code, argv.join(" ")).toBe(2);
      expect(out).toEqual([]);
      expect(err, argv.join(" ")).toHaveLength(1);
      expect(err[0]).toMatch(/^herald: .*--help/);
    }
    expect((await run(["webhooks", "get"])).err).toEqual([
      "herald: npx herald webhooks get needs <webhook-id>; see npx herald webhooks get --help",
    ]);
    expect((await run(["webhooks", "list", "--bogus"], { HERALD_TOKEN: "hrld_x" })).err[0]).toContain(
      "--bogus",
    );
  });

  it("a missing HERALD_TOKEN is one clear line, exit 2", async () => {
    const { code, out, err } = await run(["webhooks", "list"], { HERALD_URL: "http://127.0.0.1:9" });
    expect(code).toBe(2);
    expect(out).toEqual([]);
    expect(err).toEqual([
      "herald: HERALD_TOKEN is not set: create a token with `npx herald tokens create` and export HERALD_TOKEN=hrld_...",
    ]);
  });

  it("a bad token is one 401 line that names HERALD_TOKEN", async () => {
    const cli = await cliHarness();
    const r = await cli.run(["webhooks", "list"], { HERALD_TOKEN: `hrld_${"A".repeat(43)}` });
    expect(r.code).toBe(1);
    expect(r.err).toEqual([
      "herald: 401 unauthorized: The bearer token is malformed, unknown or revoked. Check HERALD_TOKEN.",
    ]);
  });

  it("a server that is down is one line, exit 1", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    const url = `http://127.0.0.1:${port}`;
    const { code, out, err } = await run(["webhooks", "list"], { HERALD_URL: url, HERALD_TOKEN: "hrld_x" });
    expect(code).toBe(1);
    expect(out).toEqual([]);
    expect(err).toEqual([
      `herald: cannot reach Herald at ${url} (ECONNREFUSED); is it running? Set HERALD_URL to point elsewhere.`,
    ]);
  });

  it("an answer that is not a Herald problem document says so", async () => {
    const cli = await cliHarness();
    const r = await cli.run(
      ["webhooks", "list"],
      {},
      {
        fetch: async () =>
          new Response("<html>Bad Gateway</html>", { status: 502, headers: { "Content-Type": "text/html" } }),
      },
    );
    expect(r.code).toBe(1);
    expect(r.err).toEqual([
      `herald: 502: the answer is not a Herald error document; is HERALD_URL (${cli.api.baseUrl}) right?`,
    ]);
  });

  it("HERALD_URL may carry /api/v1 and a trailing slash", async () => {
    const cli = await cliHarness();
    const r = await cli.run(["webhooks", "list", "--json"], { HERALD_URL: `${cli.api.baseUrl}/api/v1/` });
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({ data: [], next_cursor: null });
  });
});

/** Runs bin/herald.mjs as a real process. */
function spawnHerald(args: string[], env: Record<string, string | undefined> = {}) {
  const childEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k];
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

async function waitUntil(check: () => boolean, what: string, child: ChildProcess, timeoutMs = PATIENCE_MS) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("the herald binary (real process)", () => {
  it("node bin/herald.mjs --help prints the help, exit 0", async () => {
    const p = spawnHerald(["--help"]);
    expect(await p.exited).toBe(0);
    expect(p.stdout()).toMatch(/^Usage: npx herald <command>/);
    expect(p.stdout()).toContain("webhooks recover");
    expect(p.stderr()).toBe("");
  });

  it("node bin/herald.mjs webhooks list without a token exits 2 with one line", async () => {
    const p = spawnHerald(["webhooks", "list"], { HERALD_TOKEN: undefined });
    expect(await p.exited).toBe(2);
    expect(p.stdout()).toBe("");
    expect(p.stderr()).toBe(
      "herald: HERALD_TOKEN is not set: create a token with `npx herald tokens create` and export HERALD_TOKEN=hrld_...\n",
    );
  });

  it("node bin/herald.mjs listen stops cleanly on SIGTERM and SIGINT", async () => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const p = spawnHerald(["listen", "--port", "0"], { HERALD_WEBHOOK_SECRET: undefined });
      await waitUntil(
        () => /Listening on http:\/\/127\.0\.0\.1:\d+\//.test(p.stdout()),
        "the banner",
        p.child,
      );
      const url = /Listening on (\S+)/.exec(p.stdout())![1]!;
      expect((await fetch(url, { method: "POST", body: "{}" })).status).toBe(200);
      p.child.kill(signal);
      expect(await p.exited, signal).toBe(0);
      expect(p.stdout()).toMatch(/Stopped\.\n$/);
      expect(p.stderr()).toBe("");
    }
  });
});
