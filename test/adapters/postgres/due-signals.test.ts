import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "../../../src/adapters/postgres/connection.ts";
import { decodeHandedWork, encodeHandedWork } from "../../../src/adapters/postgres/due-payload.ts";
import {
  DUE_CHANNEL,
  PostgresDueSignals,
  parseEndpointIds,
} from "../../../src/adapters/postgres/due-signals.ts";
import type { HandedWork } from "../../../src/app/ports/store.ts";
import { publishWork } from "../../app/ports/fixtures.ts";
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
  async function listening(
    signals: PostgresDueSignals,
    heard: string[][],
    carried: (HandedWork | null)[] = [],
  ): Promise<() => void> {
    const stop = signals.listen((ids, work) => {
      heard.push([...ids]);
      carried.push(work);
    });
    const marker = "marker";
    for (let i = 0; i < 1_500 && !heard.some((h) => h.includes(marker)); i++) {
      await sqlHere`SELECT pg_notify(${DUE_CHANNEL}, ${marker})`;
      await new Promise((r) => setTimeout(r, 10));
    }
    heard.length = 0;
    carried.length = 0;
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

    it("carries a publish's work to the listeners, so an owner can queue it without reading", async () => {
      const statements: string[] = [];
      const traced = openPostgres(db.url, {
        ...db.options,
        debug: (_c: number, query: string) => statements.push(query),
      });
      try {
        const heard: string[][] = [];
        const carried: (HandedWork | null)[] = [];
        const stop = await listening(new PostgresDueSignals(sqlThere, LIVE), heard, carried);
        const here = new PostgresDueSignals(traced, LIVE);
        const work = publishWork(2);
        const [first, second] = work.deliveries;
        const other = crypto.randomUUID();
        // The work's endpoints ride with it; another endpoint given is announced alone.
        here.announce([first!.webhookId, second!.webhookId, other], work);
        await until(() => heard.length >= 2);
        expect(heard).toEqual([[first!.webhookId, second!.webhookId], [other]]);
        expect(carried).toEqual([{ ...work, event: { ...work.event, fanoutPending: false } }, null]);
        expect(statements.filter((q) => q.includes("pg_notify"))).toHaveLength(1);
        stop();
      } finally {
        await traced.end({ timeout: 5 });
      }
    });

    it("announces the endpoints alone when the work is not a publish's first attempts or does not fit", async () => {
      const heard: string[][] = [];
      const carried: (HandedWork | null)[] = [];
      const stop = await listening(new PostgresDueSignals(sqlThere, LIVE), heard, carried);
      const here = new PostgresDueSignals(sqlHere, LIVE);
      const retry = publishWork(1);
      const d = { ...retry.deliveries[0]!, attempt: 2 };
      here.announce([d.webhookId], { ...retry, deliveries: [d] });
      const big = publishWork(1, "x".repeat(8_000));
      here.announce([big.deliveries[0]!.webhookId], big);
      await until(() => heard.flat().length >= 2);
      expect(heard.flat().sort()).toEqual([d.webhookId, big.deliveries[0]!.webhookId].sort());
      expect(carried).toEqual(heard.map(() => null));
      stop();
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

    it("takes for work only a payload whose every field is what a hand-over holds", () => {
      const work = publishWork(3);
      const payload = encodeHandedWork(work, 7_000)!;
      expect(decodeHandedWork(payload)).toEqual({ ...work, event: { ...work.event, fanoutPending: false } });
      // No endpoint id is read from a hand-over by a version that knows only endpoint lists.
      expect(
        parseEndpointIds(payload).filter((id) => work.deliveries.some((d) => d.webhookId === id)),
      ).toEqual([]);
      const raw = JSON.parse(payload) as { e: unknown[]; d: unknown[][] };
      const broken = [
        { ...raw, e: raw.e.slice(1) },
        { ...raw, e: raw.e.map((x, i) => (i === 3 ? "no.such.type" : x)) },
        { ...raw, d: [] },
        { ...raw, d: [[...raw.d[0]!.slice(0, 3), "succeeded"]] },
        { ...raw, d: [[raw.d[0]![0], "not an id!", raw.d[0]![2], "pending"]] },
      ];
      for (const b of broken) expect(decodeHandedWork(JSON.stringify(b))).toBeNull();
      expect(decodeHandedWork("{not json")).toBeNull();
      expect(decodeHandedWork(work.deliveries[0]!.webhookId)).toBeNull();
      expect(encodeHandedWork(work, 100)).toBeNull();
    });

    it("reads only what can be an endpoint id from a payload", () => {
      const id = crypto.randomUUID();
      expect(parseEndpointIds(`${id},ep_1`)).toEqual([id, "ep_1"]);
      expect(parseEndpointIds(`beat x,,${id},${"a".repeat(101)}`)).toEqual([id]);
      expect(parseEndpointIds("")).toEqual([]);
    });
  });
});
