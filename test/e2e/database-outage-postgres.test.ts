import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "../../src/adapters/postgres/connection.ts";
import { connectPostgres } from "../../src/adapters/postgres/index.ts";
import { systemClock, systemIds } from "../../src/adapters/system.ts";
import { tokenUseCases } from "../../src/app/tokens.ts";
import { type HeraldProcess, type Runtime, startHerald } from "../support/herald-process.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { type FreshPostgres, freshPostgresDatabase } from "../support/postgres.ts";
import { type OwnPostgres, postgresBinaries, startOwnPostgres } from "../support/postgres-server.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";
import {
  eventBody,
  eventIdOf,
  PROGRESS_TEST_TIMEOUT_MS,
  quantile,
  waitForProgress,
} from "./delivery-support.ts";

// database-outage.test.ts on the PostgreSQL store: the database goes away and comes back under publish
// and delivery load, and the one Herald process that saw it all recovers by itself each time (ADR 10):
//   - while it is away: /readyz 503 (with Retry-After), /healthz 200 (a restart would not help), every
//     refused publish is a 503, never a 500;
//   - while it is away, every publish is answered 503 with Retry-After within 2 s, by the process's own
//     deadline: before the database is back (issue 26);
//   - once it is back: /readyz 200 within 1 s (more only when the machine is measurably slower: 10 times
//     the process's own readiness round trip measured just before; 20 times for the publishes' 2 s), and
//     deliveries resume by themselves;
//   - at the end, every event answered 202 reached the receiver: nothing accepted is lost.
// Outages: a TCP proxy between Herald and the database resets every connection and refuses new ones, or
// silences them (a vanished host: no reset, nothing answers); and real stops of a PostgreSQL cluster of
// the test's own (scripts/postgres.sh; never the run's shared server): "immediate" aborts every backend
// with no checkpoint, as a crash does, and the server recovers from its WAL at start; "fast" ends the
// sessions (admin_shutdown) and shuts down cleanly. The longest stop outlasts the 30 s statement timeout
// and every connection deadline. Where this machine has no PostgreSQL binaries, the outages are cuts at
// the proxy in front of the run's database. HERALD_OUTAGE_RUNTIME=bun or deno runs the process there.
const OWN_SERVER = postgresBinaries();

/**
 * How long after `from` the database first takes a write from a fresh client through `url` (ms): a
 * restarted server answers only once its start-up (and, after an immediate stop, its recovery) is done,
 * which on a loaded machine takes a while after `pg_ctl start` returned; the outage has ended only then.
 * Each try is a new connection with a short deadline, so a try never waits out a long one.
 */
async function writableAfter(url: string, options: object, from: number): Promise<number> {
  for (;;) {
    const sql = openPostgres(url, { ...options, max: 1, connect_timeout: 1, fetch_types: false });
    try {
      await sql`CREATE TEMP TABLE outage_probe (at timestamptz)`;
      return Date.now() - from;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      await sql.end({ timeout: 0 }).catch(() => {});
    }
    if (Date.now() - from > PATIENCE_MS) return Date.now() - from;
  }
}

type Outage = { kind: "reset" | "silence"; ms: number } | { kind: "immediate" | "fast"; ms: number };

const STOPS: Outage[] = [
  { kind: "immediate", ms: 1_000 },
  { kind: "fast", ms: 2_000 },
  { kind: "immediate", ms: 3_000 },
  { kind: "fast", ms: 5_000 },
  { kind: "immediate", ms: 10_000 },
  { kind: "immediate", ms: 35_000 },
];

const OUTAGES: Outage[] = [
  { kind: "reset", ms: 1_000 },
  { kind: "reset", ms: 10_000 },
  { kind: "silence", ms: 10_000 },
  ...(OWN_SERVER ? STOPS : [{ kind: "reset", ms: 35_000 } as Outage]),
];

/** After the database's return, /readyz answers 200 within this (issue 26). */
const READY_WITHIN_MS = 1_000;
/** While it is away, every publish is answered (503 with Retry-After) within this (issue 26). */
const PUBLISH_ANSWERED_WITHIN_MS = 2_000;
/** The runtime the process runs on: Node unless HERALD_OUTAGE_RUNTIME names bun or deno. */
const RUNTIME = (process.env.HERALD_OUTAGE_RUNTIME ?? "node") as Runtime;
/** Accepted events not yet delivered above which the publishers pause. */
const BACKLOG = 40;
if (process.env.HERALD_OUTAGE_ONLY)
  OUTAGES.splice(
    0,
    OUTAGES.length,
    ...OUTAGES.filter((o) => process.env.HERALD_OUTAGE_ONLY?.split(",").includes(o.kind)),
  );

describe(`PostgreSQL outages: one process recovers by itself (${OWN_SERVER ? "own cluster + proxy" : "proxy only"}, ${RUNTIME})`, () => {
  let server: OwnPostgres | null = null;
  let shared: FreshPostgres | null = null;
  let proxy: TcpProxy;
  let herald: HeraldProcess;
  let receiver: Receiver;
  let token: string;

  beforeAll(async () => {
    let direct: URL;
    if (OWN_SERVER) {
      server = await startOwnPostgres();
      direct = new URL(server.url);
    } else {
      shared = await freshPostgresDatabase("herald_outage");
      direct = new URL(shared.url);
    }
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    // The schema and a token, made directly (not through the proxy).
    const connection = await connectPostgres(direct.toString(), shared?.options ?? {});
    try {
      token = (
        await tokenUseCases({
          tokens: connection.repositories.tokens,
          clock: systemClock,
          ids: systemIds,
        }).create({
          name: "outage",
        })
      ).token;
    } finally {
      await connection.repositories.close();
    }
    const secrets: string[] = [];
    receiver = await startReceiver({ secrets });
    const throughProxy = new URL(direct);
    throughProxy.port = String(proxy.port);
    herald = await startHerald({
      runtime: RUNTIME,
      env: {
        DATABASE_URL: throughProxy.toString(),
        HERALD_MASTER_KEY: randomBytes(32).toString("base64"),
        HERALD_ALLOW_HTTP_URLS: "true",
        // Deliveries whose result could not be recorded are sent again after their lease: keep it short.
        HERALD_DELIVERY_TIMEOUT: "5s",
        HERALD_LEASE_MARGIN: "5s",
        HERALD_RETRY_SCHEDULE: Array(30).fill("2s").join(","),
      },
    });
    const created = await fetch(`${herald.baseUrl}/api/v1/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ url: receiver.url, events: ["message.delivered"] }),
    });
    expect(created.status).toBe(201);
    secrets.push(((await created.json()) as { secret: string }).secret);
  });

  /** What the database holds of accepted events that never arrived, for the failure's message. */
  async function explainMissing(ids: string[], at: Map<string, number>, log: (m: string) => void) {
    const url = server?.url ?? shared?.url;
    if (!url || ids.length === 0) return;
    const c = await connectPostgres(url, { ...shared?.options, max: 1 });
    try {
      const events = await c.sql`SELECT id, created_at FROM events WHERE id = ANY(${ids})`;
      const deliveries = await c.sql`
        SELECT event_id, status, attempt, shard, scheduled_at, attempted_at, error, response_status
        FROM deliveries WHERE event_id = ANY(${ids}) ORDER BY event_id, attempt`;
      const leases = await c.repositories.shards.heads();
      log(
        `missing: ${ids.map((id) => `${id} (202 at +${Math.round((at.get(id) ?? 0) / 1000)} s)`).join(", ")}\n` +
          `events stored: ${JSON.stringify(events)}\ndeliveries: ${JSON.stringify(deliveries)}\n` +
          `leases of their shards: ${JSON.stringify(leases.filter((l) => deliveries.some((d) => d.shard === l.shard)))}\n` +
          `process output (tail):\n${herald.output().split("\n").slice(-20).join("\n")}`,
      );
    } finally {
      await c.repositories.close();
    }
  }

  afterAll(async () => {
    await herald?.stop(20_000);
    await receiver?.close();
    await proxy?.close();
    await server?.close();
    await shared?.cleanup();
  });

  it(
    `recovers from ${OUTAGES.length} outages (${OUTAGES.map((o) => `${o.kind} ${o.ms / 1000}s`).join(", ")})`,
    async () => {
      const t0 = Date.now();
      const log = (msg: string) =>
        console.log(`pg outage +${Math.round((Date.now() - t0) / 1000)} s: ${msg}`);
      const get = async (path: string) => {
        const started = Date.now();
        try {
          const r = await fetch(`${herald.baseUrl}${path}`, { signal: AbortSignal.timeout(PATIENCE_MS) });
          await r.arrayBuffer();
          return { status: r.status, retryAfter: r.headers.get("retry-after"), ms: Date.now() - started };
        } catch {
          return { status: 0, retryAfter: null, ms: Date.now() - started };
        }
      };

      // Load: publishers that never stop until told, each event published once.
      const accepted = new Set<string>();
      /** When each accepted event's 202 arrived (ms since t0), to place a lost one among the outages. */
      const acceptedAt = new Map<string, number>();
      const refusals = new Map<number, number>();
      let withoutRetryAfter = 0;
      let stopLoad = false;
      const delivered = () => new Set(receiver.requests.map(eventIdOf)).size;
      /** One publish; an accepted event joins the ones that must all be delivered. */
      const publishOnce = async () => {
        let status = 0;
        let retryAfter: string | null = null;
        try {
          const r = await fetch(`${herald.baseUrl}/api/v1/events`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify(eventBody("message.delivered")),
            signal: AbortSignal.timeout(PATIENCE_MS),
          });
          status = r.status;
          retryAfter = r.headers.get("retry-after");
          const json = (await r.json().catch(() => null)) as { id?: string } | null;
          if (status === 202 && json?.id) {
            accepted.add(json.id);
            acceptedAt.set(json.id, Date.now() - t0);
          }
        } catch {
          status = 0;
        }
        return { status, retryAfter };
      };
      const publisher = async () => {
        while (!stopLoad) {
          const { status, retryAfter } = await publishOnce();
          if (status !== 202) {
            refusals.set(status, (refusals.get(status) ?? 0) + 1);
            if (status === 503 && !/^\d+$/.test(retryAfter ?? "")) withoutRetryAfter++;
          }
          // A steady trickle, held back while more than BACKLOG accepted events wait for delivery, so the
          // final "nothing lost" wait grows with the outages, not with a backlog a busy machine built up.
          await new Promise((r) => setTimeout(r, 500));
          while (!stopLoad && accepted.size - delivered() > BACKLOG)
            await new Promise((r) => setTimeout(r, 200));
        }
      };
      const load = [publisher(), publisher(), publisher()];

      const recoveries: string[] = [];
      try {
        for (const [i, outage] of OUTAGES.entries()) {
          if (i === 0) {
            const before = delivered();
            await waitForProgress(
              delivered,
              before + 5,
              (n) => `${n - before} of 5 deliveries before outage ${i + 1}`,
            );
          }
          // The process's own readiness round trip on this machine, now: the pace the bound scales with.
          const healthy: number[] = [];
          for (let k = 0; k < 5; k++) {
            const r = await get("/readyz");
            expect(r.status).toBe(200);
            healthy.push(r.ms);
          }
          const bound = Math.max(READY_WITHIN_MS, 10 * quantile(healthy, 0.5));
          const publishBound = Math.max(PUBLISH_ANSWERED_WITHIN_MS, 20 * quantile(healthy, 0.5));

          if (outage.kind === "reset" || outage.kind === "silence") await proxy.cut(outage.kind);
          else await server!.stop(outage.kind);
          log(`outage ${i + 1}: ${outage.kind} for ${outage.ms / 1000} s`);

          // While away: not ready, but alive. Probes go out every 500 ms without holding up the return.
          const away = Date.now();
          const probes: Promise<void>[] = [];
          let sawNotReady = false;
          const healthWhileAway: number[] = [];
          const readyWithoutRetryAfter: (string | null)[] = [];
          /** Publishes sent while the database is away: when each was sent and answered, and how. */
          const publishesAway: {
            sent: number;
            answered: number;
            status: number;
            retryAfter: string | null;
          }[] = [];
          while (Date.now() - away < outage.ms) {
            const sent = Date.now();
            probes.push(
              publishOnce().then((r) => {
                publishesAway.push({
                  sent,
                  answered: Date.now(),
                  status: r.status,
                  retryAfter: r.retryAfter,
                });
              }),
            );
            probes.push(
              Promise.all([get("/readyz"), get("/healthz")]).then(([ready, health]) => {
                if (ready.status === 503) {
                  sawNotReady = true;
                  if (!/^\d+$/.test(ready.retryAfter ?? "")) readyWithoutRetryAfter.push(ready.retryAfter);
                }
                healthWhileAway.push(health.status);
              }),
            );
            await new Promise((r) =>
              setTimeout(r, Math.max(0, Math.min(500, outage.ms - (Date.now() - away)))),
            );
          }

          const restoring = Date.now();
          if (outage.kind === "reset" || outage.kind === "silence") await proxy.restore();
          else await server!.start();
          const back = Date.now();
          const through = new URL(server?.url ?? shared!.url);
          through.port = String(proxy.port);
          const writable = writableAfter(through.toString(), shared?.options ?? {}, back);
          let ready = await get("/readyz");
          let diagnosed = false;
          while (ready.status !== 200 && Date.now() - back < PATIENCE_MS) {
            await new Promise((r) => setTimeout(r, 100));
            ready = await get("/readyz");
            if (!diagnosed && Date.now() - back > bound) {
              // Is it this process, or the database? A fresh client of the test's own, through the proxy.
              diagnosed = true;
              const url = new URL(server?.url ?? shared!.url);
              url.port = String(proxy.port);
              const fresh = await connectPostgres(url.toString(), { ...shared?.options, max: 1 }).then(
                async (c) => {
                  await c.repositories.close();
                  return "answers";
                },
                (e: Error) => `fails: ${e.message}`,
              );
              log(`not ready after ${bound} ms; the database, to a fresh client, ${fresh}`);
              log(`process output (tail):\n${herald.output().split("\n").slice(-15).join("\n")}`);
            }
          }
          // Measured from when the database takes writes again: before that no process could record anything.
          const recoveredMs = Date.now() - back;
          const writableMs = await writable;
          if (recoveredMs - writableMs > bound)
            log(`process output (tail):\n${herald.output().split("\n").slice(-15).join("\n")}`);
          recoveries.push(`${outage.kind} ${outage.ms / 1000}s: ${recoveredMs} ms`);
          log(
            `back; writable after ${writableMs} ms; /readyz ${ready.status} after ${recoveredMs} ms (bound ${bound} ms after writable)`,
          );
          expect(ready.status, "/readyz 200 again once the database is back").toBe(200);
          expect(
            recoveredMs - writableMs,
            `/readyz 200 within ${bound} ms of the database's taking writes again`,
          ).toBeLessThanOrEqual(bound);
          await Promise.all(probes);
          expect(
            healthWhileAway.filter((h) => h !== 200),
            "an outage is not a reason to restart: /healthz stays 200",
          ).toEqual([]);
          expect(readyWithoutRetryAfter, "every 503 of /readyz says when to come back").toEqual([]);
          // Every publish sent while the database was away, early enough to be answered before it came
          // back, was answered while it was away: by a deadline of the process's own (a 503 with
          // Retry-After), not by the database's return; and within the bound.
          const answerable = publishesAway.filter((p) => p.sent <= restoring - publishBound);
          const late = [
            ...answerable.filter((p) => p.answered > restoring),
            ...publishesAway.filter((p) => p.answered - p.sent > publishBound),
          ];
          log(
            `publishes while away: ${publishesAway.length}, answered in at most ${Math.max(0, ...publishesAway.map((p) => p.answered - p.sent))} ms (bound ${publishBound} ms): ${[...new Set(publishesAway.map((p) => p.status))].join(", ")}`,
          );
          expect(
            late.map(
              (p) => `sent at +${p.sent - away} ms, answered ${p.status} after ${p.answered - p.sent} ms`,
            ),
            `every publish answered within ${publishBound} ms while the database is away`,
          ).toEqual([]);
          expect(
            answerable.filter((p) => p.status !== 503 && p.status !== 202),
            "refused as unavailable",
          ).toEqual([]);
          expect(
            answerable.filter((p) => p.status === 503 && !/^\d+$/.test(p.retryAfter ?? "")),
            "with Retry-After",
          ).toEqual([]);
          if (outage.ms >= 5_000)
            expect(answerable.length, "publishes were sent while away").toBeGreaterThan(0);
          if (outage.ms >= 5_000) expect(sawNotReady, "/readyz said 503 during the outage").toBe(true);
          expect((await get("/healthz")).status).toBe(200);

          // Deliveries resume by themselves.
          const resumedFrom = delivered();
          await waitForProgress(
            delivered,
            resumedFrom + 5,
            (n) => `${n - resumedFrom} of 5 deliveries after outage ${i + 1}`,
          ).catch((e: Error) => {
            log(`process output (tail):\n${herald.output().split("\n").slice(-30).join("\n")}`);
            throw e;
          });
        }
      } finally {
        stopLoad = true;
        await Promise.allSettled(load);
      }

      // Nothing accepted is lost: not even what was accepted just before an immediate stop (the cluster
      // commits synchronously, as a production server does, so a 202 means the WAL holds the event).
      await waitForProgress(
        () => {
          const seen = new Set(receiver.requests.map(eventIdOf));
          return [...accepted].filter((id) => seen.has(id)).length;
        },
        accepted.size,
        (n) => `${n} of ${accepted.size} accepted events delivered`,
        { everyMs: 500 },
      ).catch(async (e: Error) => {
        await explainMissing(
          [...accepted].filter((id) => !new Set(receiver.requests.map(eventIdOf)).has(id)),
          acceptedAt,
          log,
        );
        throw e;
      });
      const seen = new Set(receiver.requests.map(eventIdOf));
      expect([...accepted].filter((id) => !seen.has(id))).toEqual([]);
      expect(receiver.requests.every((r) => r.verdict.ok)).toBe(true);
      // Refused publishes were refused properly: 503 only (no 500, no hang).
      expect([...refusals.keys()].filter((s) => s !== 503)).toEqual([]);
      expect(withoutRetryAfter, "every 503 says when to come back (Retry-After)").toBe(0);
      // The same process throughout, and it stops cleanly.
      expect(herald.child.exitCode).toBeNull();
      log(
        `${accepted.size} accepted, all delivered; ${refusals.get(503) ?? 0} publishes refused with 503; ready again after: ${recoveries.join("; ")}`,
      );
      const stopped = await herald.stop(PATIENCE_MS);
      expect(
        stopped,
        `exit code; process output (tail):\n${herald.output().split("\n").slice(-30).join("\n")}`,
      ).toBe(0);
    },
    PROGRESS_TEST_TIMEOUT_MS,
  );
});
