import type { Sql } from "postgres";
import { expect, it } from "vitest";
import { openPostgres } from "../../../src/adapters/postgres/connection.ts";
import { PostgresEvents } from "../../../src/adapters/postgres/events.ts";
import { ProcessLocks } from "../../../src/adapters/postgres/process-lock.ts";
import { CACHE_TTL_MS } from "../../../src/adapters/postgres/read-cache.ts";
import { createPostgresRepositories } from "../../../src/adapters/postgres/repositories.ts";
import { anEvent, aToken, newScope } from "../../app/ports/fixtures.ts";
import { describeOnServer } from "../../support/postgres.ts";
import { until } from "../../support/until.ts";
import {
  beats,
  cache,
  clock,
  db,
  readCacheOnServer,
  silence,
  sqlHere,
  sqlThere,
  there,
} from "./read-cache-setup.ts";

// The read cache's entries kept by heartbeats through its channel (ADR 30, amended): past CACHE_TTL_MS
// after their read, as long as a heartbeat sent since then came back. The cache's clock is frozen unless
// a test moves it. read-cache.test.ts holds the rest of the cache's cases.

describeOnServer("on a PostgreSQL server", () => {
  readCacheOnServer("herald_test_pg_cache_proof");

  const answered = () =>
    until(
      async () => beats().size === 0,
      () => `heartbeats unanswered: ${[...beats().keys()].join(", ")}`,
      { everyMs: 20 },
    );

  /** The token repository over a client that counts its reads of `tokens`, and one token read once. */
  async function oneTokenRead() {
    let reads = 0;
    const spied = new Proxy(sqlHere, {
      apply: (target, self, args) => {
        const strings = args[0] as TemplateStringsArray;
        if (Array.isArray(strings) && strings.join("?").includes("FROM tokens")) reads++;
        return Reflect.apply(target as unknown as (...a: unknown[]) => unknown, self, args);
      },
    });
    const tokens = createPostgresRepositories(spied as Sql, undefined, cache).tokens;
    const token = aToken(newScope());
    // Its insert's notification heard first: it cannot drop the entry read below.
    const before = cache.mark();
    await there.tokens.insert(token);
    await until(
      async () => cache.mark() > before,
      () => "the insert's notification never came",
    );
    expect(await tokens.findByHash(token.hash)).toEqual(token);
    const find = () => tokens.findByHash(token.hash);
    return { find, reads: () => reads, readsBefore: reads };
  }

  it("serves an entry past CACHE_TTL_MS while heartbeats sent since come back, on any connection, until they stop", async () => {
    const t = await oneTokenRead();
    clock.now += 5_000;
    // Carried by another connection's statement, as the proof of life's check carries it.
    const beat = cache.nextBeat();
    expect(beat).not.toBeNull();
    await sqlThere`SELECT pg_notify('herald_cache', ${beat})`;
    await answered();
    await t.find();
    expect(t.reads()).toBe(t.readsBefore);
    // Served near the end of its proof, it sends a heartbeat of its own, which extends it.
    clock.now += 900;
    await t.find();
    await answered();
    clock.now += 900;
    await t.find();
    expect(t.reads()).toBe(t.readsBefore);
    silence();
    clock.now += CACHE_TTL_MS + 1;
    await t.find();
    expect(t.reads()).toBe(t.readsBefore + 1);
    // A cache that holds nothing has nothing to keep: the checks carry no heartbeat.
    cache.clear();
    expect(cache.nextBeat()).toBeNull();
  });

  it("is kept by the proof of life's checks, which carry its heartbeats in their own statement", async () => {
    const locks = new ProcessLocks(() => openPostgres(db.url, { ...db.options, max: 1 }), cache);
    try {
      expect(await locks.hold("proof-process")).toBe(false);
      const t = await oneTokenRead();
      for (let i = 0; i < 3; i++) {
        clock.now += 700;
        // The check holds the lock and carries a heartbeat; no statement of the cache's own is needed.
        expect(await locks.hold("proof-process")).toBe(true);
        await answered();
        await t.find();
      }
      expect(clock.now).toBeGreaterThan(CACHE_TTL_MS);
      expect(t.reads()).toBe(t.readsBefore);
    } finally {
      await locks.close();
    }
  });

  it("is kept by a publish that carries the proof of life in its statement: the heartbeat rides with it", async () => {
    const locks = new ProcessLocks(() => openPostgres(db.url, { ...db.options, max: 1 }), cache);
    const events = new PostgresEvents(sqlHere, undefined, null, locks);
    try {
      expect(await locks.hold("proof-publisher")).toBe(false);
      const t = await oneTokenRead();
      for (let i = 0; i < 2; i++) {
        clock.now += 700;
        // The last proof 300 ms old (real time): the publish carries one, and the cache's heartbeat.
        await new Promise((r) => setTimeout(r, 350));
        await events.insertWithDeliveries(anEvent(newScope()), []);
        await answered();
      }
      // Not served meanwhile (which would send a heartbeat of its own): kept by the publishes' alone.
      expect(clock.now).toBeGreaterThan(CACHE_TTL_MS);
      await t.find();
      expect(t.reads()).toBe(t.readsBefore);
    } finally {
      await locks.close();
    }
  });
});
