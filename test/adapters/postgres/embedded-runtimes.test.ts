import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { PATIENCE_MS } from "../../support/patience.ts";
import { runtimeBin } from "../../support/runtimes.ts";

// The embedded PostgreSQL under Bun and Deno (npm run test:all: they come from runtimes/bun-deno), and a
// data directory one runtime made opened by another. Node's own cases are in embedded.test.ts.
const run = promisify(execFile);
const root = fileURLToPath(new URL("../../../", import.meta.url));
const child = fileURLToPath(new URL("./fixtures/embedded-child.ts", import.meta.url));
const base = mkdtempSync(join(tmpdir(), "herald-embedded-runtimes-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const RUNTIMES = {
  node: [process.execPath, []],
  bun: [runtimeBin("bun"), []],
  deno: [runtimeBin("deno"), ["run", "--allow-all", "--node-modules-dir=manual"]],
} as const;

async function childSays(runtime: keyof typeof RUNTIMES, args: string[]): Promise<unknown[]> {
  const [cmd, pre] = RUNTIMES[runtime];
  const { stdout } = await run(cmd, [...pre, child, ...args], { cwd: root, timeout: PATIENCE_MS });
  return stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as unknown);
}

it.each(["bun", "deno"] as const)("runs under %s", async (runtime) => {
  const dir = join(base, runtime);
  expect(await childSays(runtime, ["roundtrip", dir])).toEqual([{ roundtrip: "there and back" }]);
  // A directory another runtime made opens here too.
  expect(await childSays("node", ["roundtrip", dir])).toEqual([{ roundtrip: "there and back" }]);
});
