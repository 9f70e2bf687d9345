import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openPostgres } from "../../../src/adapters/postgres/connection.ts";
import { connectPostgres, type PostgresConnection } from "../../../src/adapters/postgres/index.ts";
import { ProcessLocks } from "../../../src/adapters/postgres/process-lock.ts";
import { anEvent, newScope } from "../../app/ports/fixtures.ts";
import { freshPostgresDatabase } from "../../support/postgres.ts";
import { until } from "../../support/until.ts";

// A process's proof of life on PostgreSQL (ADR 25): a session lock that ends with its connection. Two
// connections stand for two processes on one database.
let db: Awaited<ReturnType<typeof freshPostgresDatabase>>;
let a: PostgresConnection;
let b: PostgresConnection;
const far = new Date(Date.now() + 3_600_000);

beforeAll(async () => {
  db = await freshPostgresDatabase("herald_test_process_lock");
  a = await connectPostgres(db.url, db.options);
  b = await connectPostgres(db.url, db.options);
});
afterAll(async () => {
  await a?.sql.end({ timeout: 5 });
  await b?.sql.end({ timeout: 5 });
  await db?.cleanup();
});

// Without a server for the run the database is an embedded one, whose single process needs no proof ("sole").
describe.skipIf(!inject("postgresUrl"))("a process's proof of life on PostgreSQL", () => {
  it("a process whose session ends is not live at once, heartbeat or not; its next hold says the proof broke", async () => {
    const shards = a.repositories.shards;
    expect(shards.liveness).toBe("session");
    expect(await shards.hold("p1")).toBe(false);
    expect(await shards.hold("p1")).toBe(true);
    await shards.beat("p1", far);
    expect(await b.repositories.shards.live(new Date())).toEqual(["p1"]);
    // Another process cannot hold the same proof while this one does.
    await expect(b.repositories.shards.hold("p1")).rejects.toThrow(/taken by another session/);
    // The server ends p1's session (as it does when the process dies and its socket closes).
    const [lock] = await b.sql<{ pid: number }[]>`
      SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
    await b.sql`SELECT pg_terminate_backend(${lock!.pid})`;
    await until(async () => (await b.repositories.shards.live(new Date())).length === 0);
    // Back: the proof is taken again on a new session, and the break is told.
    let again: boolean | null = null;
    await until(async () => {
      again = await shards.hold("p1").catch(() => null);
      return again !== null;
    });
    expect(again).toBe(false);
    expect(await shards.hold("p1")).toBe(true);
    expect(await b.repositories.shards.live(new Date())).toEqual(["p1"]);
    // Leaving gives the proof up: another process may hold that id's proof now.
    await shards.leave("p1");
    expect(await b.repositories.shards.live(new Date())).toEqual([]);
    expect(await b.repositories.shards.hold("p1")).toBe(false);
    await b.repositories.shards.leave("p1");
  });

  it("the ownership round tells whether this process's proof is held, by the session that took it", async () => {
    const shards = a.repositories.shards;
    const now = new Date();
    // Before the first take there is nothing to prove: the check must take it (and tell the break).
    expect((await shards.round!(now, "p2")).proven).toBeUndefined();
    expect(await shards.hold("p2")).toBe(false);
    await shards.beat("p2", far);
    expect(await shards.round!(now, "p2")).toMatchObject({ live: ["p2"], proven: true });
    expect((await shards.round!(now)).proven).toBeUndefined();
    // The session ends: the round no longer proves it, and the next check takes the proof again.
    const [lock] = await b.sql<{ pid: number }[]>`
      SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
    await b.sql`SELECT pg_terminate_backend(${lock!.pid})`;
    await until(async () => (await shards.round!(new Date(), "p2")).proven === false);
    let again: boolean | null = null;
    await until(async () => {
      again = await shards.hold("p2").catch(() => null);
      return again !== null;
    });
    expect(again).toBe(false);
    expect((await shards.round!(new Date(), "p2")).proven).toBe(true);
    await shards.leave("p2");
    expect((await shards.round!(new Date(), "p2")).proven).toBeUndefined();
  });

  it("a publish carries the proof once the last is 300 ms old, and proves it only while its key is granted", async () => {
    const shards = a.repositories.shards;
    const heard: string[] = [];
    const off = shards.proofs!.listen((id) => heard.push(id));
    const publish = () => a.repositories.events.insertWithDeliveries!(anEvent(newScope()), []);
    const aged = () => new Promise((r) => setTimeout(r, 350));
    expect(await shards.hold("p3")).toBe(false);
    // Just proven (the take): nothing to carry yet.
    await publish();
    expect(heard).toEqual([]);
    await aged();
    await publish();
    expect(heard).toEqual(["p3"]);
    // Carried, it is recent again.
    await publish();
    expect(heard).toEqual(["p3"]);
    // Its session ends: a publish finds the key not granted, and proves nothing (the next check tells).
    const [lock] = await b.sql<{ pid: number }[]>`
      SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
    await b.sql`SELECT pg_terminate_backend(${lock!.pid})`;
    await until(async () => (await shards.round!(new Date(), "p3")).proven === false);
    await aged();
    await publish();
    expect(heard).toEqual(["p3"]);
    off();
    await until(async () => (await shards.hold("p3").catch(() => null)) !== null);
    await shards.leave("p3");
  });

  it("a process of an earlier version (no lock of its own) is counted live by its heartbeat alone", async () => {
    // Written as a version before ADR 25 writes it: no `locked`.
    await a.sql`INSERT INTO processes (id, expires_at) VALUES ('old', ${far})`;
    expect(await b.repositories.shards.live(new Date())).toEqual(["old"]);
    await a.repositories.shards.leave("old");
  });

  it("a lock client whose check failed is ended and a fresh one opened, so a connection that cannot connect again is not kept", async () => {
    // postgres.js 3.4.9 can leave a connection unable to connect again after it closed with a write
    // pending: every statement then fails with CONNECT_TIMEOUT (ADR 10). A client like that, kept, would
    // never hold the lock again, and the process would own no shard (seen in CI after backends were
    // terminated under load: no delivery for two minutes).
    let ended = 0;
    const stuck = Object.assign(
      () => Promise.reject(Object.assign(new Error("write CONNECT_TIMEOUT"), { code: "CONNECT_TIMEOUT" })),
      { end: async () => void ended++ },
    ) as unknown as Sql;
    const opened: Sql[] = [];
    const locks = new ProcessLocks(() => {
      const client = opened.length === 0 ? stuck : openPostgres(db.url, { ...db.options, max: 1 });
      opened.push(client);
      return client;
    });
    await expect(locks.hold("p-stuck")).rejects.toThrow(/CONNECT_TIMEOUT/);
    expect(ended).toBe(1);
    // The next check opens a fresh client and takes the proof on it.
    expect(await locks.hold("p-stuck")).toBe(false);
    expect(await locks.hold("p-stuck")).toBe(true);
    expect(opened.length).toBe(2);
    await locks.end("p-stuck");
  });
});
