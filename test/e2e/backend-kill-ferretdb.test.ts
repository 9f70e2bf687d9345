import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMongo } from "../../src/adapters/mongo/index.ts";
import { openPostgres } from "../../src/adapters/postgres/connection.ts";
import { ferretdbBinary } from "../support/ferretdb.ts";
import { uniqueDbName } from "../support/mongo.ts";
import { exported, postgresBinaries, runScript } from "../support/postgres-server.ts";
import { expectNothingLost, heraldOn, publishLoad, type World } from "./backend-kill-support.ts";
import { PROGRESS_TEST_TIMEOUT_MS, waitForProgress } from "./delivery-support.ts";

// Issue 17 item 8, on the MongoDB store: a MongoDB-compatible server on PostgreSQL (FerretDB v1 on a
// PostgreSQL cluster of the test's own, started by scripts/ferretdb.sh; never the run's database) whose
// PostgreSQL backends are terminated under publish load. FerretDB passes PostgreSQL's failures on as
// server errors with messages (no MongoDB code says "unavailable"); Herald answers every publish 202 or
// 503 with Retry-After, never 500, and delivers every event it accepted. backend-kill-postgres.test.ts
// does the same on the PostgreSQL store.

const AVAILABLE = ferretdbBinary() !== null && postgresBinaries();

describe.skipIf(!AVAILABLE)("FerretDB on PostgreSQL: backends terminated under publish load", () => {
  // A path the script makes itself, so that PostgreSQL's own user can reach it when the test runs as root.
  const state = join(tmpdir(), `herald-ferret-kill-${randomUUID().slice(0, 8)}`);
  let backendUrl: string;
  let w: World;

  beforeAll(async () => {
    const uri = exported(await runScript("ferretdb.sh", ["start", state]), "MONGODB_URI");
    const backend = readFileSync(join(state, "backend"), "utf8");
    const pg = /--postgresql-url=(\S+)/.exec(backend)?.[1];
    if (!pg) throw new Error(`FerretDB runs on no PostgreSQL here: ${backend}`);
    const url = new URL(pg);
    url.search = "";
    backendUrl = url.toString();
    const dbName = uniqueDbName("e2e_backend_kill");
    w = await heraldOn({ MONGODB_URI: uri, MONGODB_DB: dbName }, async () => {
      const c = await connectMongo(uri, dbName);
      return { tokens: c.repositories.tokens, close: () => c.client.close() };
    });
  });

  afterAll(async () => {
    await w?.close();
    await runScript("ferretdb.sh", ["stop", state]).catch(() => {});
  });

  it(
    "every answer is 202 or 503, never 500, and every 202'd event is delivered",
    async () => {
      const admin = openPostgres(backendUrl, {
        max: 1,
        connection: { application_name: "herald-test-killer" },
      });
      const load = publishLoad(w);
      let terminated = 0;
      try {
        await waitForProgress(load.delivered, 10, (n) => `${n} of 10 deliveries before the first kill`);
        for (let round = 0; round < 20; round++) {
          const rows = await admin<{ ok: boolean }[]>`
            SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`;
          terminated += rows.filter((r) => r.ok).length;
          await new Promise((r) => setTimeout(r, 200 + (round % 5) * 80));
        }
        const after = load.accepted.size;
        await waitForProgress(
          () => load.accepted.size - after,
          20,
          (n) => `${n} of 20 publishes after the kills`,
        );
      } finally {
        await load.stop();
        await admin.end({ timeout: 5 });
      }
      console.log(
        `ferretdb backend kill: ${terminated} backends terminated; answers ${JSON.stringify([...load.answers])}; ${load.accepted.size} accepted`,
      );
      expect(terminated, "FerretDB's PostgreSQL connections were terminated").toBeGreaterThan(20);
      await expectNothingLost(w, load);
    },
    PROGRESS_TEST_TIMEOUT_MS,
  );
});
