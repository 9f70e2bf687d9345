import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHeraldClient } from "../../clients/typescript/client.ts";
import { connectMongo } from "../../src/adapters/mongo/index.ts";
import { systemClock, systemIds } from "../../src/adapters/system.ts";
import { tokenUseCases } from "../../src/app/tokens.ts";
import { ferretdbBinary, type OwnFerretDb, startOwnFerretDb } from "../support/ferretdb.ts";
import { type HeraldProcess, startHerald } from "../support/herald-process.ts";
import { behaviours, type Receiver, startReceiver } from "../support/receiver.ts";
import {
  allDeliveries,
  createEndpoint,
  E2E_SCALE,
  eventBody,
  eventIdOf,
  PROGRESS_TEST_TIMEOUT_MS,
  pool,
  publishRaw,
  waitForProgress,
  waitUntil,
} from "./delivery-support.ts";

// Issue 31, as it was seen: Herald on FerretDB v1 (SQLite, as CI runs it) SIGKILLed three times under
// load and restarted, then ordinary delivery. Before the fix, recording results failed from the restart
// on ("the database is unreachable" every 30-40 s, while the database answered everything else), and
// nothing was recorded any more: no retry was sent, attempts stayed pending. Now every pair owed arrives
// and is recorded as succeeded, no write of results is called unreachable (the database never went away),
// and after the crashes a failing endpoint gets its retries and a new event is delivered and recorded.

const EVENTS = Math.round(150 * E2E_SCALE);
const binary = ferretdbBinary();

describe.skipIf(binary === null)("FerretDB: crashes under load, then ordinary delivery (issue 31)", () => {
  let db: OwnFerretDb;
  let token: string;
  let herald: HeraldProcess | null = null;
  const receivers: Receiver[] = [];
  const secrets: string[] = [];
  const dbName = `crash_${randomUUID().slice(0, 8)}`;
  const masterKey = randomBytes(32).toString("base64");

  beforeAll(async () => {
    db = await startOwnFerretDb(binary!);
    const c = await connectMongo(db.uri, dbName);
    try {
      token = (
        await tokenUseCases({ tokens: c.repositories.tokens, clock: systemClock, ids: systemIds }).create({
          name: "crash",
        })
      ).token;
    } finally {
      await c.client.close();
    }
    for (let i = 0; i < 4; i++) receivers.push(await startReceiver({ secrets }));
  });

  afterAll(async () => {
    await herald?.stop(20_000);
    await Promise.allSettled(receivers.map((r) => r.close()));
    await db?.close();
  });

  const start = (port?: number) =>
    startHerald({
      ...(port ? { port } : {}),
      env: {
        MONGODB_URI: db.uri,
        MONGODB_DB: dbName,
        HERALD_MASTER_KEY: masterKey,
        HERALD_ALLOW_HTTP_URLS: "true",
        HERALD_ALLOW_PRIVATE_NETWORKS: "true",
        HERALD_DELIVERY_TIMEOUT: "3s",
        HERALD_LEASE_MARGIN: "5s",
        HERALD_RETRY_SCHEDULE: "200ms,500ms,1s,1s,1s",
        HERALD_LOG_LEVEL: "warn",
      },
    });

  it(
    `delivers and records ${EVENTS} events to 3 endpoints through 3 kills, then retries and new events as usual`,
    async () => {
      herald = await start();
      const port = herald.port;
      const outputs: string[] = [];
      const client = () => createHeraldClient({ baseUrl: herald!.baseUrl, token });
      const endpoints: { id: string }[] = [];
      for (const r of receivers.slice(0, 3)) {
        const e = await createEndpoint(client(), r.url, ["message.delivered"]);
        secrets.push(e.secret);
        endpoints.push(e);
      }
      const pairs = () =>
        receivers.slice(0, 3).reduce((n, r) => n + new Set(r.requests.map(eventIdOf)).size, 0);
      const total = 3 * EVENTS;

      let restarting: Promise<void> | null = null;
      const crash = async () => {
        const before = herald!;
        await before.kill();
        outputs.push(before.output());
        herald = await start(port);
      };
      const accepted = new Set<string>();
      const publishing = pool(
        Array.from({ length: EVENTS }, () => ({ key: randomUUID(), body: eventBody("message.delivered") })),
        6,
        async (ev) => {
          for (;;) {
            const r = await publishRaw(herald!.baseUrl, token, ev.body, ev.key).catch(() => null);
            if (r?.status === 202) {
              accepted.add(r.id!);
              return;
            }
            if (r && r.status < 500) throw new Error(`publish answered ${r.status}`);
            await (restarting ?? new Promise((res) => setTimeout(res, 100)));
          }
        },
      );
      // Kills while publishing and delivering, at shares of the pairs received.
      for (const share of [0.15, 0.4, 0.65]) {
        await waitForProgress(pairs, Math.floor(total * share), (n) => `${n} pairs before a kill`, {
          everyMs: 20,
        });
        restarting = crash();
        await restarting;
        restarting = null;
      }
      await publishing;
      expect(accepted.size).toBe(EVENTS);
      await waitForProgress(pairs, total, (n) => `only ${n} of ${total} pairs arrived`, { everyMs: 200 });
      await waitForProgress(
        async () => {
          let n = 0;
          for (const e of endpoints) n += (await allDeliveries(client(), e.id, "succeeded")).length;
          return n;
        },
        total,
        (n) => `${n} of ${total} pairs recorded as succeeded`,
        { everyMs: 1_000 },
      );
      for (const e of endpoints) expect(await allDeliveries(client(), e.id, "pending")).toEqual([]);

      // Ordinary delivery after the crashes: a failing endpoint gets its retries, and each is recorded.
      const flaky = receivers[3]!;
      flaky.setBehaviour((req) => (req.index < 2 ? behaviours.status(503) : behaviours.verify(req)));
      const f = await createEndpoint(client(), flaky.url, ["message.sent"]);
      secrets.push(f.secret);
      const sent = await publishRaw(herald.baseUrl, token, eventBody("message.sent"), randomUUID());
      expect(sent.status).toBe(202);
      await flaky.waitFor(3);
      await waitUntil(
        async () => (await allDeliveries(client(), f.id)).some((d) => d.status === "succeeded"),
        () => "the third attempt recorded as succeeded",
      );
      const attempts = (await allDeliveries(client(), f.id)).sort((a, b) => a.attempt - b.attempt);
      expect(attempts.map((d) => [d.attempt, d.status])).toEqual([
        [1, "failed"],
        [2, "failed"],
        [3, "succeeded"],
      ]);
      expect(flaky.requests.every((r) => r.verdict.ok)).toBe(true);
      expect(receivers.slice(0, 3).every((r) => r.requests.every((q) => q.verdict.ok))).toBe(true);

      const ready = await fetch(`${herald.baseUrl}/readyz`);
      expect(ready.status).toBe(200);
      outputs.push(herald.output());
      // The database never went away: no write of results may have been reported as a lost connection.
      const lines = outputs.join("\n").split("\n");
      expect(lines.filter((l) => /recording delivery results/.test(l) && /unreachable/.test(l))).toEqual([]);
      const recordingTrouble = lines.filter((l) => /recording delivery results|handed back/.test(l));
      console.log(
        `ferretdb crash: ${total} pairs through 3 kills; ${recordingTrouble.length} recording warnings${recordingTrouble.length ? `, e.g. ${recordingTrouble[0]}` : ""}`,
      );
      expect(await herald.stop(20_000)).toBe(0);
      herald = null;
    },
    PROGRESS_TEST_TIMEOUT_MS,
  );
});
