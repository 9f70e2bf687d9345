import { defineConfig } from "vitest/config";
import type { InlineConfig } from "vitest/node";

/**
 * What `npm test` leaves to `npm run test:all` (ADR 26): tests that need a tool `npm install` does not
 * bring (MongoDB or FerretDB, Chromium, Bun and Deno: scripts/test-all.mjs says which file needs which)
 * and the whole-system files, which start real Herald processes and take minutes each.
 */
export const SLOW = [
  "test/e2e/**/*.test.ts",
  "test/adapters/mongo/**/*.test.ts",
  "test/adapters/http/console/browser*.test.ts",
  "test/adapters/http/console/runtimes.test.ts",
  "**/*-runtimes.test.ts",
  "test/brokers/**/*.test.ts",
  "test/destinations/**/*.test.ts",
  "test/bench/**/*.test.ts",
  "**/*-mongo.test.ts",
];

/**
 * `npm test` (npm sets npm_lifecycle_event) is the quick set: every file but SLOW, on the memory store
 * and PostgreSQL, with no MongoDB looked for. Anything else (`npm run test:all`, `npx vitest run <files>`)
 * runs what it names, SLOW files included, with the run's MongoDB; HERALD_TEST_EXCLUDE (comma-separated
 * globs) leaves files out, as test:all does for a tool it lacks.
 */
const quick = process.env.npm_lifecycle_event === "test";
/**
 * HERALD_TEST_SET=rest: only the SLOW files, for a run that follows `npm test` (`.ci/run` calls `npm test`,
 * then `npm run test:all` with this set, so no file runs twice).
 */
const rest = !quick && process.env.HERALD_TEST_SET === "rest";

export default defineConfig({
  test: {
    include: rest ? SLOW : ["test/**/*.test.ts"],
    exclude: [
      "**/node_modules/**",
      ...(quick ? SLOW : []),
      ...(process.env.HERALD_TEST_EXCLUDE?.split(",").filter(Boolean) ?? []),
    ],
    globalSetup: [quick ? "test/support/global-setup-quick.ts" : "test/support/global-setup.ts"],
    // Only a bound on how long a hung test takes to fail: tests wait on signals and on progress, never on
    // the machine's speed (test/support/patience.ts), so a busy machine must not turn slowness into failure.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: "forks",
    // Two test files at a time, whatever the core count (vitest's default is cores - 1: one file at a time
    // on a 2-core machine). Most whole-system files wait on processes, outages and timers rather than the
    // CPU; every file has its own database, data directory and ports, and no test asserts speed.
    maxWorkers: 2,
    // CI reads the counts from JSON reports: scripts/test-all.mjs names one per run (HERALD_VITEST_JSON),
    // so that no run overwrites another.
    reporters: process.env.CI
      ? ["default", ["json", { outputFile: process.env.HERALD_VITEST_JSON ?? ".ci/tmp/vitest.json" }]]
      : ["default"],
  } satisfies InlineConfig,
});
