import { defineConfig } from "vitest/config";
import type { InlineConfig } from "vitest/node";

/**
 * What `npm test` leaves to `npm run test:all` (vitest.all.config.ts, ADR 25): tests that need a tool
 * `npm install` does not bring (MongoDB or FerretDB, Chromium, Bun and Deno: scripts/test-all.mjs says
 * which file needs which) and the whole-system files, which start real Herald processes and take minutes
 * each. `npm test` is everything else, on the memory store and PostgreSQL (a server or the embedded one).
 */
export const SLOW = [
  "test/e2e/**",
  "test/adapters/mongo/**",
  "test/adapters/http/console/browser.test.ts",
  "test/adapters/http/console/runtimes.test.ts",
  "**/*-runtimes.test.ts",
];

/** The options both runs share. */
export const shared = {
  include: ["test/**/*.test.ts"] as string[],
  // Only a bound on how long a hung test takes to fail: tests wait on signals and on progress, never on
  // the machine's speed (test/support/patience.ts), so a busy machine must not turn slowness into failure.
  testTimeout: 600_000,
  hookTimeout: 600_000,
  pool: "forks" as const,
  // Two test files at a time, whatever the core count (vitest's default is cores - 1: one file at a time
  // on a 2-core machine). Most whole-system files wait on processes, outages and timers rather than the
  // CPU; every file has its own database, data directory and ports, and no test asserts speed.
  maxWorkers: 2,
} satisfies InlineConfig;

/** CI reads the counts from a JSON report (HERALD_VITEST_JSON names it, so that no run overwrites another). */
export const reporters = (file: string) =>
  process.env.CI
    ? ["default", ["json", { outputFile: process.env.HERALD_VITEST_JSON ?? file }]]
    : ["default"];

export default defineConfig({
  test: {
    ...shared,
    exclude: ["**/node_modules/**", ...SLOW],
    globalSetup: ["test/support/global-setup-quick.ts"],
    reporters: reporters(".ci/tmp/vitest.json") as never,
  },
});
