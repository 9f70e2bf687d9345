import type { Sql } from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openPostgres } from "../../../src/adapters/postgres/connection.ts";
import { PostgresDueSignals } from "../../../src/adapters/postgres/due-signals.ts";
import { PostgresEvents } from "../../../src/adapters/postgres/events.ts";
import { migrate } from "../../../src/adapters/postgres/migrate.ts";
import type { HandedWork } from "../../../src/app/ports/store.ts";
import { publishWork } from "../../app/ports/fixtures.ts";
import { describeOnServer, type FreshPostgres, freshPostgresDatabase } from "../../support/postgres.ts";
import { until } from "../../support/until.ts";

// A publish that carries other processes' work in its own statement (ADR 30), and the channel's barrier.
// "here" publishes, "there" is another process listening.

let db: FreshPostgres;
let sqlThere: Sql;
const LIVE = { listening: true };

describeOnServer("on a PostgreSQL server", () => {
  beforeAll(async () => {
    db = await freshPostgresDatabase("herald_test_pg_carry");
    sqlThere = openPostgres(db.url, db.options);
    await migrate(sqlThere);
  });
  afterAll(async () => {
    await sqlThere?.end({ timeout: 5 });
    await db?.cleanup();
  });

  /** A client whose statements (after its first, which learns the array types) are counted, with due signals and events over it. */
  async function here() {
    const statements: string[] = [];
    const sql = openPostgres(db.url, { ...db.options, debug: (_c: number, q: string) => statements.push(q) });
    await sql`SELECT 1`;
    statements.length = 0;
    const signals = new PostgresDueSignals(sql, LIVE);
    return { sql, statements, signals, events: new PostgresEvents(sql, undefined, signals) };
  }

  /** Listens there until a barrier of its own comes back (the LISTEN is then in place). */
  async function listening(heard: (HandedWork | null)[]) {
    const there = new PostgresDueSignals(sqlThere, LIVE);
    const stop = there.listen((_ids, work) => void heard.push(work));
    await there.barrier();
    return { there, stop };
  }

  it("sends the notification of other owners' first deliveries in the publish's own statement", async () => {
    const h = await here();
    try {
      const heard: (HandedWork | null)[] = [];
      const { stop } = await listening(heard);
      const { event, deliveries } = publishWork(3);
      const [mine, theirs1, theirs2] = deliveries;
      h.signals.carry((id) => id !== mine!.webhookId);
      expect(await h.events.insertWithDeliveries(event, deliveries)).toBe(true);
      await until(() => heard.length >= 1);
      expect(heard).toEqual([{ event: { ...event, fanoutPending: false }, deliveries: [theirs1, theirs2] }]);
      expect(h.statements).toHaveLength(1);
      expect(h.statements[0]).toContain("pg_notify");
      // The engine's announcement of the same work after the publish sends nothing more.
      h.signals.announce([theirs1!.webhookId, theirs2!.webhookId], {
        event,
        deliveries: [theirs1!, theirs2!],
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(h.statements).toHaveLength(1);
      expect(heard).toHaveLength(1);
      // A repeat of the publish writes nothing and announces nothing.
      expect(await h.events.insertWithDeliveries(event, deliveries)).toBe(false);
      await new Promise((r) => setTimeout(r, 200));
      expect(heard).toHaveLength(1);
      stop();
    } finally {
      await h.sql.end({ timeout: 5 });
    }
  });

  it("carries nothing when every endpoint is this process's, or once carry is stopped", async () => {
    const h = await here();
    try {
      const heard: (HandedWork | null)[] = [];
      const { stop } = await listening(heard);
      h.signals.carry(() => false);
      const a = publishWork(2);
      expect(await h.events.insertWithDeliveries(a.event, a.deliveries)).toBe(true);
      h.signals.carry(null);
      const b = publishWork(2);
      expect(await h.events.insertWithDeliveries(b.event, b.deliveries)).toBe(true);
      await new Promise((r) => setTimeout(r, 200));
      expect(heard).toEqual([]);
      expect(h.statements.filter((q) => q.includes("pg_notify"))).toEqual([]);
      stop();
    } finally {
      await h.sql.end({ timeout: 5 });
    }
  });

  it("publishes without its notifications when they fail (here a payload PostgreSQL refuses)", async () => {
    const h = await here();
    try {
      const w = publishWork(1);
      const events = new PostgresEvents(h.sql, undefined, {
        publishNotices: () => [{ eventId: w.event.id, payload: "x".repeat(9_000) }],
        carried: () => {
          throw new Error("nothing was carried");
        },
      });
      expect(await events.insertWithDeliveries(w.event, w.deliveries)).toBe(true);
      const [row] = await h.sql`SELECT count(*)::int AS n FROM deliveries WHERE event_id = ${w.event.id}`;
      expect(row!.n).toBe(1);
    } finally {
      await h.sql.end({ timeout: 5 });
    }
  });

  it("resolves a barrier only after every announcement committed before it was heard", async () => {
    const h = await here();
    try {
      const heard: (HandedWork | null)[] = [];
      const { there, stop } = await listening(heard);
      h.signals.carry(() => true);
      for (let round = 0; round < 20; round++) {
        const w = publishWork(1);
        expect(await h.events.insertWithDeliveries(w.event, w.deliveries)).toBe(true);
        // Committed before the barrier was asked for: heard by the time it resolves, every round.
        await there.barrier();
        expect(heard.map((x) => x?.event.id)).toContain(w.event.id);
      }
      stop();
    } finally {
      await h.sql.end({ timeout: 5 });
    }
  });
});
