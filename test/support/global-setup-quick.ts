import type { TestProject } from "vitest/node";
import { runPostgres, runScratch } from "./global-setup.ts";

/**
 * `npm test`'s run (vitest.config.ts): the run's PostgreSQL as in global-setup.ts, and no MongoDB: the
 * tests that need one (the Mongo adapter's, the Mongo outage) are in `npm run test:all`, so `npm test`
 * never looks for mongod or builds FerretDB.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const scratch = runScratch();
  project.provide("scratchDir", scratch.dir);
  const postgres = await runPostgres();
  project.provide("postgresUrl", postgres.url);
  project.provide("mongoUri", "");
  project.provide(
    "mongoUnavailable",
    "npm test starts no MongoDB: a test that needs one belongs in npm run test:all (vitest.config.ts's SLOW list)",
  );
  return async () => {
    await postgres.stop();
    scratch.remove();
  };
}
