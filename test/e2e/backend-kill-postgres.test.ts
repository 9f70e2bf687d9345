import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "../../src/adapters/postgres/connection.ts";
import { connectPostgres } from "../../src/adapters/postgres/index.ts";
import { type FreshPostgres, freshPostgresDatabase } from "../support/postgres.ts";
import { type OwnPostgres, postgresBinaries, startOwnPostgres } from "../support/postgres-server.ts";
import { until } from "../support/until.ts";
import { expectNothingLost, heraldOn, publishLoad, type World } from "./backend-kill-support.ts";
import { PROGRESS_TEST_TIMEOUT_MS, waitForProgress } from "./delivery-support.ts";

// Issue 17 item 8, on the PostgreSQL store: a database that errs is the same condition as one that cannot
// be reached. Publishes keep coming while the server ends Herald's connections under it:
//   - pg_terminate_backend on every Herald connection, again and again (57P01 to statements in flight,
//     closed connections to the ones queued), on a database of the run's server;
//   - on a cluster of the test's own (scripts/postgres.sh; never the run's shared server), a backend
//     killed with SIGKILL: the postmaster resets every other one (57P02) and answers new connections
//     "the database system is in recovery mode" (57P03) until its crash recovery ends; the crash of the
//     issue's load run.
// Every publish answers 202 or 503 with Retry-After (never 500, never no answer), and every event
// answered 202 reaches the receiver (the engine tries its writes again): nothing accepted is lost.
// database-outage-postgres.test.ts covers the database going away whole (stops, resets, silence).

const OWN_SERVER = postgresBinaries();

// With no PostgreSQL server for the run, the store is an embedded one in this process: no backends to end.
describe.skipIf(!process.env.DATABASE_URL && !OWN_SERVER)(
  "PostgreSQL backends terminated under publish load (pg_terminate_backend)",
  () => {
    let db: FreshPostgres;
    let w: World;

    beforeAll(async () => {
      db = await freshPostgresDatabase("herald_backend_kill");
      w = await heraldOn({ DATABASE_URL: db.url }, async () => {
        const c = await connectPostgres(db.url, db.options);
        return { tokens: c.repositories.tokens, close: () => c.repositories.close() };
      });
    });

    afterAll(async () => {
      await w?.close();
      await db?.cleanup();
    });

    it(
      "every answer is 202 or 503, never 500, and every 202'd event is delivered",
      async () => {
        // The test's own connection, named apart from Herald's ("herald"), so it never ends itself.
        const admin = openPostgres(db.url, {
          ...db.options,
          max: 1,
          connection: { application_name: "herald-test-killer" },
        });
        const load = publishLoad(w);
        let terminated = 0;
        try {
          await waitForProgress(load.delivered, 10, (n) => `${n} of 10 deliveries before the first kill`);
          for (let round = 0; round < 25; round++) {
            const rows = await admin<{ ok: boolean }[]>`
            SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'herald' AND pid <> pg_backend_pid()`;
            terminated += rows.filter((r) => r.ok).length;
            await new Promise((r) => setTimeout(r, 150 + (round % 5) * 70));
          }
          // Publishing goes on a moment after the last kill, on fresh connections.
          const after = load.accepted.size;
          await waitForProgress(
            () => load.accepted.size - after,
            20,
            // Publishers wait while deliveries lag; Herald's own last lines say why nothing moves.
            (n) =>
              `${n} of 20 publishes after the kills\n${w.herald.output().split("\n").slice(-30).join("\n")}`,
          );
        } finally {
          await load.stop();
          await admin.end({ timeout: 5 });
        }
        console.log(
          `backend kill: ${terminated} backends terminated; answers ${JSON.stringify([...load.answers])}; ${load.accepted.size} accepted`,
        );
        expect(terminated, "Herald's connections were terminated").toBeGreaterThan(25);
        await expectNothingLost(w, load);
      },
      PROGRESS_TEST_TIMEOUT_MS,
    );
  },
);

describe.skipIf(!OWN_SERVER)(
  "a PostgreSQL backend crashes under publish load (SIGKILL: reset, then recovery)",
  () => {
    let server: OwnPostgres;
    let w: World;

    beforeAll(async () => {
      server = await startOwnPostgres();
      w = await heraldOn({ DATABASE_URL: server.url }, async () => {
        const c = await connectPostgres(server.url);
        return { tokens: c.repositories.tokens, close: () => c.repositories.close() };
      });
    });

    afterAll(async () => {
      await w?.close();
      await server?.close();
    });

    it(
      "every answer is 202 or 503 through each crash recovery, and every 202'd event is delivered",
      async () => {
        const admin = () =>
          openPostgres(server.url, { max: 1, connection: { application_name: "herald-test-killer" } });
        const load = publishLoad(w);
        let crashes = 0;
        try {
          for (let round = 0; round < 3; round++) {
            const before = load.delivered();
            await waitForProgress(
              load.delivered,
              before + 10,
              (n) => `${n - before} of 10 deliveries before crash ${round + 1}`,
            );
            // Herald's deliveries went on, yet the server may still refuse a new session for a moment after
            // the previous crash's reset (57P03, "in recovery mode"): the test asks again until it is let in.
            let pids: number[] = [];
            await until(
              async () => {
                const sql = admin();
                try {
                  pids = (
                    await sql<{ pid: number }[]>`
                  SELECT pid FROM pg_stat_activity WHERE application_name = 'herald' ORDER BY backend_start`
                  ).map((r) => r.pid);
                  return true;
                } catch (e) {
                  if ((e as { code?: unknown }).code === "57P03") return false;
                  throw e;
                } finally {
                  await sql.end({ timeout: 5 });
                }
              },
              "a session of the test's own after the crash recovery",
              { everyMs: 100 },
            );
            expect(pids.length).toBeGreaterThan(0);
            // One backend dies as a crash does; the postmaster ends every other one and recovers.
            process.kill(pids[0]!, "SIGKILL");
            crashes++;
            await waitForProgress(
              () => (server.log().match(/all server processes terminated; reinitializing/g) ?? []).length,
              crashes,
              (n) => `${n} of ${crashes} crash resets in the server's log`,
            );
          }
          const after = load.accepted.size;
          await waitForProgress(
            () => load.accepted.size - after,
            20,
            (n) => `${n} of 20 publishes after the crashes`,
          );
        } finally {
          await load.stop();
        }
        const log = server.log();
        console.log(
          `backend crash: ${crashes} crashes; answers ${JSON.stringify([...load.answers])}; ${load.accepted.size} accepted; recovery-mode refusals in the log: ${(log.match(/the database system is in recovery mode/g) ?? []).length}`,
        );
        await expectNothingLost(w, load);
      },
      PROGRESS_TEST_TIMEOUT_MS,
    );
  },
);
