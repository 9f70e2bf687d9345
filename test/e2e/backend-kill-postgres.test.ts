import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "../../src/adapters/postgres/connection.ts";
import { connectPostgres } from "../../src/adapters/postgres/index.ts";
import { systemClock, systemIds } from "../../src/adapters/system.ts";
import { tokenUseCases } from "../../src/app/tokens.ts";
import { type HeraldProcess, startHerald } from "../support/herald-process.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { type FreshPostgres, freshPostgresDatabase } from "../support/postgres.ts";
import { type OwnPostgres, postgresBinaries, startOwnPostgres } from "../support/postgres-server.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { eventBody, eventIdOf, PROGRESS_TEST_TIMEOUT_MS, waitForProgress } from "./delivery-support.ts";

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
/** Accepted events not yet delivered above which the publishers pause (the final wait stays short). */
const BACKLOG = 60;

interface World {
  herald: HeraldProcess;
  receiver: Receiver;
  token: string;
  close(): Promise<void>;
}

/** Herald on `url` (schema and token made directly), an endpoint at a receiver that verifies signatures. */
async function heraldOn(url: string, options: FreshPostgres["options"] = {}): Promise<World> {
  const connection = await connectPostgres(url, options);
  let token: string;
  try {
    token = (
      await tokenUseCases({
        tokens: connection.repositories.tokens,
        clock: systemClock,
        ids: systemIds,
      }).create({ name: "backend-kill" })
    ).token;
  } finally {
    await connection.repositories.close();
  }
  const secrets: string[] = [];
  const receiver = await startReceiver({ secrets });
  const herald = await startHerald({
    env: {
      DATABASE_URL: url,
      HERALD_MASTER_KEY: randomBytes(32).toString("base64"),
      HERALD_ALLOW_HTTP_URLS: "true",
      HERALD_DELIVERY_TIMEOUT: "5s",
      HERALD_LEASE_MARGIN: "5s",
      HERALD_RETRY_SCHEDULE: Array(30).fill("1s").join(","),
    },
  });
  const created = await fetch(`${herald.baseUrl}/api/v1/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ url: receiver.url, events: ["message.delivered"] }),
  });
  expect(created.status).toBe(201);
  secrets.push(((await created.json()) as { secret: string }).secret);
  return {
    herald,
    receiver,
    token,
    async close() {
      await herald.stop(20_000);
      await receiver.close();
    },
  };
}

/** Publishers that keep publishing until stopped, counting every answer by status. */
function publishLoad(w: World, publishers = 4) {
  const accepted = new Set<string>();
  const answers = new Map<number, number>();
  let withoutRetryAfter = 0;
  const failures: string[] = [];
  let stop = false;
  const delivered = () => new Set(w.receiver.requests.map(eventIdOf)).size;
  const one = async () => {
    while (!stop) {
      let status = 0;
      try {
        const r = await fetch(`${w.herald.baseUrl}/api/v1/events`, {
          method: "POST",
          headers: { authorization: `Bearer ${w.token}`, "content-type": "application/json" },
          body: JSON.stringify(eventBody("message.delivered")),
          signal: AbortSignal.timeout(PATIENCE_MS),
        });
        status = r.status;
        const text = await r.text();
        if (status === 202) accepted.add((JSON.parse(text) as { id: string }).id);
        else if (status === 503 && !/^\d+$/.test(r.headers.get("retry-after") ?? "")) withoutRetryAfter++;
        else if (status !== 503 && failures.length < 5) failures.push(`${status}: ${text.slice(0, 300)}`);
      } catch (e) {
        if (failures.length < 5) failures.push(`no answer: ${(e as Error).message}`);
      }
      answers.set(status, (answers.get(status) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 20));
      while (!stop && accepted.size - delivered() > BACKLOG) await new Promise((r) => setTimeout(r, 100));
    }
  };
  const running = Array.from({ length: publishers }, one);
  return {
    accepted,
    answers,
    failures,
    delivered,
    get withoutRetryAfter() {
      return withoutRetryAfter;
    },
    async stop() {
      stop = true;
      await Promise.all(running);
    },
  };
}

/** After the load: only 202 and 503 (with Retry-After), and every accepted event delivered, signed. */
async function expectNothingLost(w: World, load: ReturnType<typeof publishLoad>) {
  const statuses = [...load.answers.keys()].sort();
  expect(
    statuses.filter((s) => s !== 202 && s !== 503),
    `every publish answers 202 or 503: ${JSON.stringify([...load.answers])}\n${load.failures.join("\n")}\n${w.herald.output().split("\n").slice(-20).join("\n")}`,
  ).toEqual([]);
  expect(load.withoutRetryAfter, "every 503 says when to come back (Retry-After)").toBe(0);
  await waitForProgress(
    () => {
      const seen = new Set(w.receiver.requests.map(eventIdOf));
      return [...load.accepted].filter((id) => seen.has(id)).length;
    },
    load.accepted.size,
    (n) => `${n} of ${load.accepted.size} accepted events delivered`,
    { everyMs: 300 },
  );
  expect(w.receiver.requests.every((r) => r.verdict.ok)).toBe(true);
  const ready = await fetch(`${w.herald.baseUrl}/readyz`);
  expect(ready.status).toBe(200);
  expect(w.herald.child.exitCode).toBeNull();
}

// With no PostgreSQL server for the run, the store is an embedded one in this process: no backends to end.
describe.skipIf(!process.env.DATABASE_URL && !OWN_SERVER)(
  "PostgreSQL backends terminated under publish load (pg_terminate_backend)",
  () => {
    let db: FreshPostgres;
    let w: World;

    beforeAll(async () => {
      db = await freshPostgresDatabase("herald_backend_kill");
      w = await heraldOn(db.url, db.options);
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
            (n) => `${n} of 20 publishes after the kills`,
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
      w = await heraldOn(server.url);
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
            const sql = admin();
            let pids: number[];
            try {
              pids = (
                await sql<{ pid: number }[]>`
                SELECT pid FROM pg_stat_activity WHERE application_name = 'herald' ORDER BY backend_start`
              ).map((r) => r.pid);
            } finally {
              await sql.end({ timeout: 5 });
            }
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
