import { defineConfig } from "vitest/config";
import { reporters, shared } from "./vitest.config.ts";

/** `npm run test:all` (scripts/test-all.mjs): every test file, `npm test`'s and the SLOW ones, with MongoDB. */
export default defineConfig({
  test: {
    ...shared,
    exclude: ["**/node_modules/**", ...(process.env.HERALD_TEST_EXCLUDE?.split(",").filter(Boolean) ?? [])],
    globalSetup: ["test/support/global-setup.ts"],
    reporters: reporters(".ci/tmp/vitest-all.json") as never,
  },
});
