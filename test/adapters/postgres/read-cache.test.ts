import type { Sql } from "postgres";
import { beforeEach, describe, expect, it } from "vitest";
import { openPostgres } from "../../../src/adapters/postgres/connection.ts";
import { CACHE_TTL_MS, ReadCache } from "../../../src/adapters/postgres/read-cache.ts";
import { createPostgresRepositories } from "../../../src/adapters/postgres/repositories.ts";
import type { Repositories } from "../../../src/app/ports/store.ts";
import { anEndpoint, aToken, newScope } from "../../app/ports/fixtures.ts";
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

// The server's read cache (ADR 18): tokens and a project's subscribed endpoints kept between publishes.
// "Here" is one Herald process with the cache, "there" another process writing the same database. The
// cache's clock is frozen unless a test moves it, so an entry never expires by itself: a change made
// there can reach here only through the triggers' notifications. Entries kept past CACHE_TTL_MS by
// heartbeats: read-cache-proof.test.ts.

let here: Repositories;

describeOnServer("on a PostgreSQL server", () => {
  readCacheOnServer("herald_test_pg_cache");
  beforeEach(() => {
    here = createPostgresRepositories(sqlHere, undefined, cache);
  });

  /** Asks `read` until `done` holds of its answer (a notification arrives in milliseconds); answers it. */
  async function eventually<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
    let v!: T;
    await until(
      async () => {
        v = await read();
        return done(v);
      },
      () => `the last reading was ${JSON.stringify(v)}`,
      { everyMs: 20 },
    );
    return v;
  }

  /** Runs `write`, then waits until the cache has heard `changes` changes since it began. */
  async function heard(write: () => Promise<unknown>, changes = 1) {
    const before = cache.mark();
    await write();
    await eventually(
      async () => cache.mark(),
      (g) => g >= before + changes,
    );
  }

  /** A client that counts the statements sent through it that read `table` (a DELETE FROM is no read). */
  function countingReads(sql: Sql, table: string) {
    let n = 0;
    const spied = new Proxy(sql, {
      apply: (target, self, args) => {
        const strings = args[0] as TemplateStringsArray;
        const text = Array.isArray(strings) ? strings.join("?") : "";
        if (text.includes(`FROM ${table}`) && !text.includes(`DELETE FROM ${table}`)) n++;
        return Reflect.apply(target as unknown as (...a: unknown[]) => unknown, self, args);
      },
    });
    return { sql: spied as Sql, reads: () => n };
  }

  describe("the read cache", () => {
    it("answers a token and a fan-out again without reading, and sees this process's own writes at once", async () => {
      const scope = newScope();
      const spy = countingReads(sqlHere, "tokens");
      const spyE = countingReads(sqlHere, "endpoints");
      const tokens = createPostgresRepositories(spy.sql, undefined, cache).tokens;
      const endpoints = createPostgresRepositories(spyE.sql, undefined, cache).endpoints;
      const token = aToken(scope);
      // The insert drops the cache here at once, and again when its own notification comes back.
      await heard(() => tokens.insert(token), 2);
      expect(await tokens.findByHash(token.hash)).toEqual(token);
      expect(await tokens.findByHash(token.hash)).toEqual(token);
      expect(spy.reads()).toBe(1);
      expect(await tokens.revoke(token.id, new Date())).toBe(true);
      expect((await tokens.findByHash(token.hash))?.revokedAt).toBeInstanceOf(Date);

      expect(await endpoints.listSubscribed(scope, "message.sent")).toEqual([]);
      const e = anEndpoint(scope, { events: ["message.sent"] });
      const inserted = cache.mark();
      await endpoints.insert(e);
      expect((await endpoints.listSubscribed(scope, "message.sent")).map((x) => x.id)).toEqual([e.id]);
      await eventually(
        async () => cache.mark(),
        (g) => g >= inserted + 2,
      );
      expect((await endpoints.listSubscribed(scope, "message.sent")).map((x) => x.id)).toEqual([e.id]);
      const reads = spyE.reads();
      expect((await endpoints.listSubscribed(scope, "message.sent")).map((x) => x.id)).toEqual([e.id]);
      expect((await endpoints.listSubscribed(scope, "message.sent")).map((x) => x.id)).toEqual([e.id]);
      expect(spyE.reads()).toBe(reads);
      await endpoints.update(scope, e.id, { url: "https://changed.example/hook", updatedAt: new Date() });
      expect((await endpoints.listSubscribed(scope, "message.sent"))[0]?.url).toBe(
        "https://changed.example/hook",
      );
      await endpoints.delete(scope, e.id);
      expect(await endpoints.listSubscribed(scope, "message.sent")).toEqual([]);
    });

    it("keeps what it holds through writes that change no row", async () => {
      // A cache of its own, listening on a client of its own from now on: a notification of an earlier
      // test's write, still on its way to the shared client's listener, cannot clear it.
      const sqlOwn = openPostgres(db.url, db.options);
      const own = new ReadCache(sqlOwn, () => clock.now);
      try {
        await own.start();
        const scope = newScope();
        const spyT = countingReads(sqlOwn, "tokens");
        const spyE = countingReads(sqlOwn, "endpoints");
        const { tokens } = createPostgresRepositories(spyT.sql, undefined, own);
        const { endpoints } = createPostgresRepositories(spyE.sql, undefined, own);
        const token = aToken(scope);
        const e = anEndpoint(scope, { events: ["message.sent"] });
        const before = own.mark();
        const shared = cache.mark();
        await tokens.insert(token);
        await endpoints.insert(e);
        // Each insert drops the cache here at once, and again when its own notification comes back.
        await eventually(
          async () => own.mark(),
          (g) => g >= before + 4,
        );
        const read = async () => {
          expect(await tokens.findByHash(token.hash)).toEqual(token);
          expect((await endpoints.listSubscribed(scope, "message.sent")).map((x) => x.id)).toEqual([e.id]);
          expect((await endpoints.getMany([e.id])).map((x) => x.id)).toEqual([e.id]);
        };
        await read();
        const reads = [spyT.reads(), spyE.reads()];
        const missing = globalThis.crypto.randomUUID();
        const at = new Date();
        expect(await tokens.revoke(missing, at)).toBe(false);
        expect(
          await endpoints.update(scope, missing, { url: "https://other.example/", updatedAt: at }),
        ).toBeNull();
        expect(await endpoints.delete(scope, missing)).toBe(false);
        await endpoints.markSucceeded([e.id]); // not failing: nothing to clear
        expect(await endpoints.markReported(e.id, "failing", at)).toBe(false);
        expect(await endpoints.disable(missing, "manual", at)).toBe(false);
        await read();
        expect([spyT.reads(), spyE.reads()]).toEqual(reads);
        // The file's shared listener hears the two inserts too: let it, so the next test starts quiet.
        await eventually(
          async () => cache.mark(),
          (g) => g >= shared + 2,
        );
      } finally {
        own.close();
        await sqlOwn.end({ timeout: 5 });
      }
    });

    it("makes one read for callers that miss the same entry together, and none for a caller after a change", async () => {
      const scope = newScope();
      const token = aToken(scope);
      await heard(() => there.tokens.insert(token));
      const spy = countingReads(sqlHere, "tokens");
      const tokens = createPostgresRepositories(spy.sql, undefined, cache).tokens;
      const found = await Promise.all(Array.from({ length: 16 }, () => tokens.findByHash(token.hash)));
      expect(found).toEqual(Array.from({ length: 16 }, () => token));
      expect(spy.reads()).toBe(1);
      // A read on its way when a change is heard is not shared with those who ask after it.
      cache.changed("tokens");
      const first = tokens.findByHash(token.hash);
      cache.changed("tokens");
      const second = tokens.findByHash(token.hash);
      await Promise.all([first, second]);
      expect(spy.reads()).toBe(3);
    });

    it("sees a token revoked by another process without waiting for the entry to expire", async () => {
      const scope = newScope();
      const token = aToken(scope);
      await there.tokens.insert(token);
      expect((await here.tokens.findByHash(token.hash))?.revokedAt).toBeNull();
      expect(await there.tokens.revoke(token.id, new Date())).toBe(true);
      const seen = await eventually(
        () => here.tokens.findByHash(token.hash),
        (t) => t?.revokedAt != null,
      );
      expect(seen?.revokedAt).toBeInstanceOf(Date);
    });

    it("sees endpoints created, changed, disabled and deleted by another process", async () => {
      const scope = newScope();
      const ids = async () => (await here.endpoints.listSubscribed(scope, "message.sent")).map((e) => e.id);
      expect(await ids()).toEqual([]);
      const e = anEndpoint(scope, { events: ["message.sent"] });
      await there.endpoints.insert(e);
      expect(await eventually(ids, (v) => v.length === 1)).toEqual([e.id]);
      await there.endpoints.disable(e.id, "manual", new Date());
      const disabled = await eventually(
        () => here.endpoints.listSubscribed(scope, "message.sent"),
        (v) => v[0]?.enabled === false,
      );
      expect(disabled[0]?.enabled).toBe(false);
      // The engine's read by id (prepare) is cached the same way.
      expect((await here.endpoints.getMany([e.id]))[0]?.url).toBe(e.url);
      await there.endpoints.update(scope, e.id, { url: "https://moved.example/hook", updatedAt: new Date() });
      const moved = await eventually(
        () => here.endpoints.getMany([e.id, e.id]),
        (v) => v[0]?.url === "https://moved.example/hook",
      );
      expect(moved.map((x) => x.url)).toEqual(["https://moved.example/hook", "https://moved.example/hook"]);
      // Written around the repositories (as an operator's SQL would be): the trigger announces it all the same.
      await sqlThere`UPDATE endpoints SET events = '{}' WHERE id = ${e.id}`;
      expect(await eventually(ids, (v) => v.length === 0)).toEqual([]);
    });

    it("keeps working after its listening connection is killed: changes made meanwhile are not served stale", async () => {
      const scope = newScope();
      const token = aToken(scope);
      await there.tokens.insert(token);
      expect((await here.tokens.findByHash(token.hash))?.revokedAt).toBeNull();
      await sqlThere`
        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND query ILIKE 'listen%herald_cache%'`;
      await there.tokens.revoke(token.id, new Date());
      const seen = await eventually(
        () => here.tokens.findByHash(token.hash),
        (t) => t?.revokedAt != null,
      );
      expect(seen?.revokedAt).toBeInstanceOf(Date);
      // Listening again: a later change arrives too.
      const e = anEndpoint(scope, { events: ["message.sent"] });
      expect(await here.endpoints.listSubscribed(scope, "message.sent")).toEqual([]);
      await there.endpoints.insert(e);
      expect(
        (
          await eventually(
            () => here.endpoints.listSubscribed(scope, "message.sent"),
            (v) => v.length === 1,
          )
        ).length,
      ).toBe(1);
    });

    it("never serves an entry older than CACHE_TTL_MS, nor one read before a change it heard", async () => {
      const scope = newScope();
      const spy = countingReads(sqlHere, "tokens");
      const tokens = createPostgresRepositories(spy.sql, undefined, cache).tokens;
      const token = aToken(scope);
      await heard(() => there.tokens.insert(token));
      await tokens.findByHash(token.hash);
      // A channel gone silent: no heartbeat comes back (nor is another sent while one is awaited).
      silence();
      clock.now += CACHE_TTL_MS;
      await tokens.findByHash(token.hash);
      expect(spy.reads()).toBe(1);
      clock.now += 1;
      await tokens.findByHash(token.hash);
      expect(spy.reads()).toBe(2);

      const readAt = cache.mark();
      cache.changed("tokens");
      cache.keep("tokens", "some-hash", readAt, token);
      expect(cache.get("tokens", "some-hash")).toBeUndefined();
    });

    it("serves nothing when its heartbeat does not come back, and nothing before it listens", async () => {
      const scope = newScope();
      const token = aToken(scope);
      await heard(() => there.tokens.insert(token));
      const idle = new ReadCache(sqlHere, () => clock.now);
      const spy = countingReads(sqlHere, "tokens");
      const tokens = createPostgresRepositories(spy.sql, undefined, idle).tokens;
      await tokens.findByHash(token.hash);
      await tokens.findByHash(token.hash);
      expect(spy.reads()).toBe(2);

      // A heartbeat that cannot come back (as when the listening connection went silent): the next check
      // stops serving at once, listens again, and serves again once its own heartbeat returns.
      await here.tokens.findByHash(token.hash);
      expect(cache.get("tokens", token.hash)).toBeDefined();
      silence();
      clock.now += 3_000;
      cache.keep("tokens", token.hash, cache.mark(), token);
      const check = cache.check();
      expect(cache.get("tokens", token.hash)).toBeUndefined();
      await check;
      await eventually(
        async () => beats().size,
        (n) => n === 0,
      );
      cache.keep("tokens", token.hash, cache.mark(), token);
      expect(cache.get("tokens", token.hash)).toEqual(token);
    });
  });
});
