import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "../../../src/adapters/postgres/connection.ts";
import {
  DUE_CHANNEL,
  PostgresDueSignals,
  parseEndpointIds,
} from "../../../src/adapters/postgres/due-signals.ts";
import { describeOnServer, type FreshPostgres, freshPostgresDatabase } from "../../support/postgres.ts";
import { until } from "../../support/until.ts";

// Due work announced across processes (ADR 18): "here" announces, "there" is another process listening.

let db: FreshPostgres;
let sqlHere: Sql;
let sqlThere: Sql;

describeOnServer("on a PostgreSQL server", () => {
  beforeAll(async () => {
    db = await freshPostgresDatabase("herald_test_pg_due");
    sqlHere = openPostgres(db.url, db.options);
    sqlThere = openPostgres(db.url, db.options);
  });
  afterAll(async () => {
    await sqlThere?.end({ timeout: 5 });
    await sqlHere?.end({ timeout: 5 });
    await db?.cleanup();
  });

  /** A channel the read cache's heartbeat found working. */
  const LIVE = { listening: true };

  /** Listens there and resolves once the LISTEN is in place (a heartbeat sent after it comes back). */
  async function listening(signals: PostgresDueSignals, heard: string[][]): Promise<() => void> {
    const stop = signals.listen((ids) => heard.push([...ids]));
    const marker = "marker";
    for (let i = 0; i < 1_500 && !heard.some((h) => h.includes(marker)); i++) {
      await sqlHere`SELECT pg_notify(${DUE_CHANNEL}, ${marker})`;
      await new Promise((r) => setTimeout(r, 10));
    }
    heard.length = 0;
    return stop;
  }

  describe("due signals", () => {
    it("tells a listening process which endpoints got work, and folds what is announced meanwhile into one statement", async () => {
      const statements: string[] = [];
      const traced = openPostgres(db.url, {
        ...db.options,
        debug: (_c: number, query: string) => statements.push(query),
      });
      try {
        const heard: string[][] = [];
        const stop = await listening(new PostgresDueSignals(sqlThere, LIVE), heard);
        const here = new PostgresDueSignals(traced, LIVE);
        const [a, b, c, d] = [
          crypto.randomUUID(),
          crypto.randomUUID(),
          crypto.randomUUID(),
          crypto.randomUUID(),
        ];
        here.announce([a, b]);
        // Announced while the first is on its way: sent together after it, each endpoint once.
        here.announce([b, c]);
        here.announce([d]);
        await until(() => heard.flat().length >= 5);
        expect(heard).toEqual([
          [a, b],
          [b, c, d],
        ]);
        expect(statements.filter((q) => q.includes("pg_notify"))).toHaveLength(2);
        // More than one payload holds (PostgreSQL refuses 8,000 bytes): split, every id heard once.
        heard.length = 0;
        const many = Array.from({ length: 500 }, () => crypto.randomUUID());
        here.announce(many);
        await until(() => heard.flat().length >= many.length);
        expect(heard.length).toBeGreaterThan(1);
        expect(heard.flat().sort()).toEqual([...many].sort());
        stop();
        // Stopped: later announcements are not heard.
        const late = crypto.randomUUID();
        here.announce([late]);
        await new Promise((r) => setTimeout(r, 200));
        expect(heard.flat()).not.toContain(late);
      } finally {
        await traced.end({ timeout: 5 });
      }
    });

    it("never throws when the database is gone: the owners' own reads find the work", async () => {
      const gone = openPostgres("postgres://nobody@127.0.0.1:1/none", { connect_timeout: 1 });
      try {
        const signals = new PostgresDueSignals(gone, LIVE);
        expect(() => signals.announce([crypto.randomUUID()])).not.toThrow();
        const stop = signals.listen(() => {});
        await new Promise((r) => setTimeout(r, 1_500));
        stop();
      } finally {
        await gone.end({ timeout: 1 });
      }
    });

    it("reads only what can be an endpoint id from a payload", () => {
      const id = crypto.randomUUID();
      expect(parseEndpointIds(`${id},ep_1`)).toEqual([id, "ep_1"]);
      expect(parseEndpointIds(`beat x,,${id},${"a".repeat(101)}`)).toEqual([id]);
      expect(parseEndpointIds("")).toEqual([]);
    });
  });
});
