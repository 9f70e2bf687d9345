import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { RECONNECT_AT_MOST_S, reconnectBackoff } from "../../../src/adapters/postgres/connection.ts";
import { PING_DEADLINE_MS } from "../../../src/adapters/postgres/readiness.ts";
import { connectPostgres, type PostgresConnection } from "../../../src/adapters/postgres/repositories.ts";
import { StoreUnavailableError } from "../../../src/app/ports/store.ts";
import { aToken, newScope } from "../../app/ports/fixtures.ts";
import { freePort } from "../../support/herald-process.ts";
import { PATIENCE_MS } from "../../support/patience.ts";
import { describeOnServer, type FreshPostgres, freshPostgresDatabase } from "../../support/postgres.ts";
import { startTcpProxy, type TcpProxy } from "../../support/tcp-proxy.ts";

// The repositories through a TCP proxy whose database goes away (ADR 10): what the process sees when
// the database stops (refused connections) or stops behind a proxy or balancer that still accepts them
// and closes them at once. The two faults that made /readyz answer 3 s late after an outage and left a
// publish unanswered during one.

/** What a call came to: its value or its error, or "waiting" if it had neither after PATIENCE_MS. */
function outcome<T>(p: Promise<T>): Promise<T | Error | "waiting"> {
  return Promise.race([
    p.catch((e: Error) => e),
    new Promise<"waiting">((r) => setTimeout(() => r("waiting"), PATIENCE_MS).unref()),
  ]);
}

describeOnServer("PostgreSQL repositories through a database outage", () => {
  let db: FreshPostgres;
  let proxy: TcpProxy;
  let c: PostgresConnection;
  let target: { host: string; port: number };

  beforeAll(async () => {
    db = await freshPostgresDatabase("herald_outage_repos");
    const direct = new URL(db.url);
    target = { host: direct.hostname, port: Number(direct.port || 5432) };
    proxy = await startTcpProxy(target);
    const through = new URL(direct);
    through.port = String(proxy.port);
    c = await connectPostgres(through.toString(), db.options, { cache: true });
  });
  afterAll(async () => {
    await c?.repositories.close();
    await proxy?.close();
    await db?.cleanup();
  });

  it("reconnects every quarter of a second at most, however many connections failed", () => {
    for (const failures of [1, 5, 20, 100, 1_000])
      expect(reconnectBackoff(failures)).toBeLessThanOrEqual(RECONNECT_AT_MOST_S);
    expect(RECONNECT_AT_MOST_S).toBeLessThanOrEqual(0.25);
  });

  it("after an outage, every pooled connection answers at once, however many times each failed", async () => {
    await c.repositories.ping();
    await proxy.cut("reset");
    try {
      // Twenty callers keep trying for 3 s, as publishes and the engine do: every pooled connection fails
      // to connect again and again. postgres.js's own backoff counts those failures across the pool and
      // grew to 10–20 s before each connection's next attempt (17 s after the return, measured); and a
      // connection that closed with a write pending could never send its startup message again
      // (postgres.js 3.4.9: CONNECT_TIMEOUT after 3 s, at every attempt).
      const started = Date.now();
      const tries = await Promise.all(
        Array.from({ length: 20 }, async () => {
          let failed = 0;
          while (Date.now() - started < 3_000) {
            const r = await outcome(c.repositories.shards.heads());
            if (r instanceof StoreUnavailableError) failed++;
          }
          return failed;
        }),
      );
      expect(
        tries.reduce((a, b) => a + b),
        "calls failed while the database was away",
      ).toBeGreaterThan(20);
    } finally {
      await proxy.restore();
    }
    await expect(c.repositories.ping()).resolves.toBeUndefined();
    // Twenty calls at once, as the engine and the API make them: each must be answered by the database
    // before the readiness ping's deadline, not by a connection's backoff or connect timeout.
    const answered = await Promise.race([
      Promise.all(
        Array.from({ length: 20 }, () =>
          c.repositories.shards.heads().then(
            () => "answered",
            (e: Error) => e.message,
          ),
        ),
      ),
      new Promise((r) => setTimeout(() => r("the ping's deadline passed"), PING_DEADLINE_MS).unref()),
    ]);
    expect(answered, "every call answered before the readiness ping's deadline").toEqual(
      Array(20).fill("answered"),
    );
  });

  it("answers a call at once when its database is gone behind a proxy that accepts and closes, and a write it answered 503 is never stored", async () => {
    // A client of its own, whose pool holds one connection (the migration's), as after a quiet while.
    const through = new URL(db.url);
    through.port = String(proxy.port);
    const d = await connectPostgres(through.toString(), db.options, { cache: true });
    onTestFinished(() => d.repositories.close());
    await d.repositories.ping();
    // The proxy still accepts, then closes each connection, as a proxy whose database stopped does:
    // postgres.js takes a clean close while connecting as a reason to try again, for as long as it lasts,
    // and the call waits with it unless the stall watch answers it (a reset instead fails it at once).
    proxy.retarget({ host: "127.0.0.1", port: await freePort() });
    await proxy.cut("reset");
    await proxy.restore();
    const token = aToken(newScope());
    try {
      // Each client's first connection meets the reset of its startup in flight and fails at once; the
      // calls after it wait on connections that keep reconnecting.
      const calls = await Promise.all([
        outcome(d.repositories.shards.heads()),
        outcome(d.repositories.tokens.insert(token)),
        outcome(d.repositories.tokens.list()),
        outcome(d.repositories.ping()),
      ]);
      for (const got of calls) {
        expect(got, "answered while the database is away").toBeInstanceOf(StoreUnavailableError);
      }
      // The insert waited on such a connection, and the watch answered it.
      expect((calls[1] as Error).message).toMatch(
        /^the database answered nothing for \d+ ms: gave up waiting$/,
      );
    } finally {
      proxy.retarget(target);
    }
    await expect(d.repositories.ping()).resolves.toBeUndefined();
    await expect(d.repositories.shards.heads()).resolves.toBeInstanceOf(Array);
    // The insert answered 503 stayed queued in the driver on a connection that kept reconnecting; left
    // there, it would have run as soon as the database answered (a publish stored after its 503).
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await d.repositories.tokens.findByHash(token.hash)).toBeNull();
  });
});
