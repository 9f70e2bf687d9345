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
    // CI reads the counts from a JSON report: .ci/tmp/vitest.json for `npm test`, another file for the
    // runtime matrix's run (HERALD_VITEST_JSON), so that neither overwrites the other.
    reporters: process.env.CI
      ? ["default", ["json", { outputFile: process.env.HERALD_VITEST_JSON ?? ".ci/tmp/vitest.json" }]]
      : ["default"],
  },
});
