import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    // Only a bound on how long a hung test takes to fail: tests wait on signals and on progress, never on
    // the machine's speed (test/support/patience.ts), so a busy machine must not turn slowness into failure.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: "forks",
    // Two test files at a time, whatever the core count (vitest's default is cores - 1: one file at a time
    // on a 2-core machine). Most whole-system files wait on processes, outages and timers rather than the
    // CPU; every file has its own database, data directory and ports, and no test asserts speed.
    maxWorkers: 2,
    // CI reads the counts from a JSON report: .ci/tmp/vitest.json for `npm test`, another file for the
    // runtime matrix's run (HERALD_VITEST_JSON), so that neither overwrites the other.
    reporters: process.env.CI
      ? ["default", ["json", { outputFile: process.env.HERALD_VITEST_JSON ?? ".ci/tmp/vitest.json" }]]
      : ["default"],
  },
});
