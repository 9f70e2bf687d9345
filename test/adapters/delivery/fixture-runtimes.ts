import { execFile, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { SendOutcome } from "../../../src/domain/delivery.ts";
import { runtimeBin } from "../../support/runtimes.ts";

// Runs a sender fixture (fixtures/*.ts) on Bun and Deno in child processes, with the test CA trusted each
// runtime's own way (Bun: NODE_EXTRA_CA_CERTS; Deno: DENO_CERT). Shared by the *-runtimes.test.ts files.
export const run = promisify(execFile);
export const root = fileURLToPath(new URL("../../../", import.meta.url));
export const bin = (name: "bun" | "deno") => runtimeBin(name);
export const runs = (name: "bun" | "deno") =>
  spawnSync(bin(name), ["--version"], { timeout: 20_000 }).status === 0;

/** Bun and Deno, each with the arguments that run `fixture` (a path) and the variables that trust a CA. */
export function fixtureRuntimes(fixture: string) {
  return [
    { name: "bun", args: [fixture], trust: (ca: string) => ({ NODE_EXTRA_CA_CERTS: ca }) },
    {
      name: "deno",
      args: ["run", "--allow-all", "--node-modules-dir=manual", "--no-lock", fixture],
      trust: (ca: string) => ({ DENO_CERT: ca }),
    },
  ] as const;
}

type FixtureRuntime = ReturnType<typeof fixtureRuntimes>[number];

/**
 * Runs a send fixture on `runtime` with `cases` (as JSON) and `secret`, trusting the CA at `caPath`;
 * answers the outcomes it printed on its last line.
 */
export async function sendOn(
  runtime: FixtureRuntime,
  cases: unknown[],
  secret: string,
  caPath: string,
): Promise<SendOutcome[]> {
  const { stdout } = await run(bin(runtime.name), [...runtime.args, JSON.stringify(cases), secret], {
    cwd: root,
    env: { ...process.env, ...runtime.trust(caPath) },
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "[]") as SendOutcome[];
}
