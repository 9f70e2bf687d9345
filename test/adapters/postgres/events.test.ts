import type { Sql } from "postgres";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openPostgres } from "../../../src/adapters/postgres/connection.ts";
import { PostgresEvents } from "../../../src/adapters/postgres/events.ts";
import { migrate } from "../../../src/adapters/postgres/migrate.ts";
import { type DeliveryRow, deliveryFromRow } from "../../../src/adapters/postgres/rows/deliveries.ts";
import { firstDeliveries } from "../../../src/app/event-acceptance.ts";
import type { StoredEvent } from "../../../src/app/ports/events.ts";
import type { Scope } from "../../../src/app/ports/paging.ts";
import type { Delivery } from "../../../src/domain/delivery.ts";
import { aDelivery, anEndpoint, anEvent, newScope, uuid } from "../../app/ports/fixtures.ts";
import { type FreshPostgres, freshPostgresDatabase, tracedPostgres } from "../../support/postgres.ts";

// What the PostgreSQL events owe beyond the shared contract: a publish writes its event and first
// deliveries in one statement, all or nothing; concurrent publishes share statements, each answered alone.

let db: FreshPostgres;
let sql: Sql;
/** Every statement sent through `traced` (postgres.js's debug hook). */
const sent: string[] = [];
let traced: Sql;

beforeAll(async () => {
  db = await freshPostgresDatabase("herald_test_pg_events");
  sql = openPostgres(db.url, db.options);
  await migrate(sql);
  traced = await tracedPostgres(db, (query) => sent.push(query));
});
afterAll(async () => {
  await traced?.end({ timeout: 5 });
  await sql?.end({ timeout: 5 });
  await db?.cleanup();
});
beforeEach(async () => {
  await sql`TRUNCATE events, deliveries`;
  sent.length = 0;
});

/** An event with its first deliveries, one per endpoint. */
function aPublish(scope: Scope, endpoints = 3, over: Partial<StoredEvent> = {}) {
  const event = anEvent(scope, over);
  const deliveries = Array.from({ length: endpoints }, () => aDelivery(scope, { eventId: event.id }));
  return { event, deliveries: deliveries as Delivery[] };
}

const stored = async (eventIds: readonly string[]) => {
  const ids = sql.array([...eventIds], 25);
  const [events] = await sql<{ n: number }[]>`
    SELECT count(*)::integer AS n FROM events WHERE id = ANY(${ids}::text[])`;
  const deliveries = await sql<{ id: string }[]>`
    SELECT id FROM deliveries WHERE event_id = ANY(${ids}::text[]) ORDER BY id`;
  return { events: events?.n, deliveries: deliveries.map((d) => d.id) };
};

describe("insertWithDeliveries", () => {
  it("writes the event and its deliveries in one statement", async () => {
    const events = new PostgresEvents(traced);
    const p = aPublish(newScope(), 8);
    expect(await events.insertWithDeliveries(p.event, p.deliveries)).toBe(true);
    expect(sent).toHaveLength(1);
    expect(await stored([p.event.id])).toEqual({
      events: 1,
      deliveries: p.deliveries.map((d) => d.id).sort(),
    });
    const [row] = await sql<{ shard: number; sequence: number }[]>`
      SELECT shard, sequence FROM deliveries WHERE id = ${p.deliveries[0]!.id}`;
    expect(row?.sequence).toBe(p.deliveries[0]!.sequence);
    expect(await events.get(newScope(), p.event.id)).toBeNull();
    expect(
      await events.get({ tenantId: p.event.tenantId, projectId: p.event.projectId }, p.event.id),
    ).toEqual(p.event);
  });

  it("sends publishes made while one statement is on its way together in one next statement", async () => {
    const events = new PostgresEvents(traced);
    const scope = newScope();
    const publishes = Array.from({ length: 6 }, () => aPublish(scope, 2));
    const answers = await Promise.all(
      publishes.map((p) => events.insertWithDeliveries(p.event, p.deliveries)),
    );
    expect(answers).toEqual(publishes.map(() => true));
    // The first goes alone at once; the five made while it was out wait and go as one (ADR 18).
    expect(sent.filter((q) => q.includes("INSERT INTO events"))).toHaveLength(2);
    expect((await stored(publishes.map((p) => p.event.id))).events).toBe(6);
  });

  it("is all or nothing: a delivery that cannot be written leaves neither the event nor any delivery", async () => {
    const events = new PostgresEvents(sql);
    const p = aPublish(newScope(), 3);
    // The last delivery breaks a NOT NULL column; the event and the two before it come first in the statement.
    const broken = { ...p.deliveries[2]!, url: null as unknown as string };
    await expect(
      events.insertWithDeliveries(p.event, [p.deliveries[0]!, p.deliveries[1]!, broken]),
    ).rejects.toThrow(/null value in column "url"/);
    expect(await stored([p.event.id])).toEqual({ events: 0, deliveries: [] });
    // Nothing was left behind to block the same publish once it is whole.
    expect(await events.insertWithDeliveries(p.event, p.deliveries)).toBe(true);
    expect(await stored([p.event.id])).toEqual({
      events: 1,
      deliveries: p.deliveries.map((d) => d.id).sort(),
    });
  });

  it("answers false for an event that exists, and writes none of the repeat's deliveries", async () => {
    const events = new PostgresEvents(sql);
    const scope = newScope();
    const p = aPublish(scope, 2);
    expect(await events.insertWithDeliveries(p.event, p.deliveries)).toBe(true);
    const repeat = { ...p.event, body: "{}", targets: [uuid()] };
    const extra = aDelivery(scope, { eventId: p.event.id });
    expect(await events.insertWithDeliveries(repeat, [extra])).toBe(false);
    expect(await events.insert(repeat)).toBe(false);
    expect(await stored([p.event.id])).toEqual({
      events: 1,
      deliveries: p.deliveries.map((d) => d.id).sort(),
    });
    expect(await events.get(scope, p.event.id)).toEqual(p.event);
  });

  it("writes a publish's first attempts from their event's row, exactly as they were given", async () => {
    const events = new PostgresEvents(traced);
    const scope = newScope();
    const now = new Date("2026-11-26T08:00:00.123Z");
    const endpoints = [anEndpoint(scope), anEndpoint(scope, { enabled: false }), anEndpoint(scope)];
    const event = anEvent(scope, { createdAt: now, targets: endpoints.map((e) => e.id) });
    const first = await firstDeliveries(event, endpoints, now);
    expect(first.map((d) => d.status)).toEqual(["pending", "skipped", "pending"]);
    // Beside it in the same statement, a publish whose delivery is not a first attempt: written whole.
    const other = aPublish(scope, 1);
    const retried = { ...other.deliveries[0]!, attempt: 2, trigger: "manual" as const };
    const answers = await Promise.all([
      events.insertWithDeliveries(event, first),
      events.insertWithDeliveries(other.event, [retried]),
    ]);
    expect(answers).toEqual([true, true]);
    const read = async (eventId: string) =>
      (await sql<DeliveryRow[]>`SELECT * FROM deliveries WHERE event_id = ${eventId} ORDER BY id`).map(
        deliveryFromRow,
      );
    const byId = (ds: readonly Delivery[]) => [...ds].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(await read(event.id)).toEqual(byId(first));
    expect(await read(other.event.id)).toEqual([retried]);

    // Alone, first attempts take the short statement; it is all or nothing as well.
    sent.length = 0;
    const alone = anEvent(scope, { createdAt: now, targets: [endpoints[0]!.id] });
    const [ok] = await firstDeliveries(alone, [endpoints[0]!], now);
    await expect(
      events.insertWithDeliveries(alone, [{ ...ok!, url: null as unknown as string }]),
    ).rejects.toThrow(/null value in column "url"/);
    expect(sent.some((q) => q.includes("JOIN written"))).toBe(true);
    expect(await stored([alone.id])).toEqual({ events: 0, deliveries: [] });
    expect(await events.insertWithDeliveries(alone, [ok!])).toBe(true);
    expect(await read(alone.id)).toEqual([ok]);
  });

  it("refuses deliveries of another event", async () => {
    const events = new PostgresEvents(sql);
    const scope = newScope();
    const p = aPublish(scope, 1);
    const foreign = aDelivery(scope);
    await expect(events.insertWithDeliveries(p.event, [foreign])).rejects.toThrow(/not of/);
    expect(await stored([p.event.id, foreign.eventId])).toEqual({ events: 0, deliveries: [] });
  });
});

describe("concurrent publishes", () => {
  it("share statements, and each caller gets the answer for its own event", async () => {
    const events = new PostgresEvents(traced);
    const scope = newScope();
    const existing = aPublish(scope, 2);
    await events.insertWithDeliveries(existing.event, existing.deliveries);
    sent.length = 0;

    const fresh = Array.from({ length: 40 }, () => aPublish(scope, 4));
    const again = {
      event: { ...existing.event, body: "{}" },
      deliveries: [aDelivery(scope, { eventId: existing.event.id })],
    };
    const calls = [...fresh.slice(0, 20), again, ...fresh.slice(20)];
    const answers = await Promise.all(calls.map((c) => events.insertWithDeliveries(c.event, c.deliveries)));

    expect(answers).toEqual(calls.map((c) => c !== again));
    // The calls made while two statements were on their way went together: far fewer statements than calls.
    expect(sent.length).toBeLessThan(calls.length / 4);
    const written = await stored(fresh.map((p) => p.event.id));
    expect(written).toEqual({
      events: 40,
      deliveries: fresh.flatMap((p) => p.deliveries.map((d) => d.id)).sort(),
    });
    expect((await stored([existing.event.id])).deliveries).toEqual(
      existing.deliveries.map((d) => d.id).sort(),
    );
  });

  it("lets exactly one of several callers with the same event id write it, with its own deliveries", async () => {
    const events = new PostgresEvents(sql);
    const scope = newScope();
    const event = anEvent(scope);
    // Each caller with deliveries of its own ids, to see whose were written.
    const calls = Array.from({ length: 6 }, () => ({
      event,
      deliveries: [aDelivery(scope, { eventId: event.id }), aDelivery(scope, { eventId: event.id })],
    }));
    const answers = await Promise.all(calls.map((c) => events.insertWithDeliveries(c.event, c.deliveries)));
    expect(answers.filter((a) => a)).toHaveLength(1);
    const winner = calls[answers.indexOf(true)]!;
    expect(await stored([event.id])).toEqual({
      events: 1,
      deliveries: winner.deliveries.map((d) => d.id).sort(),
    });
  });

  it("fails only the caller whose publish cannot be written; the others of its batch are written", async () => {
    const events = new PostgresEvents(sql);
    const scope = newScope();
    const calls = Array.from({ length: 12 }, () => aPublish(scope, 2));
    const bad = calls[7]!;
    bad.deliveries[1] = {
      ...bad.deliveries[1]!,
      webhookId: null as unknown as string,
      url: null as unknown as string,
    };
    const settled = await Promise.allSettled(
      calls.map((c) => events.insertWithDeliveries(c.event, c.deliveries)),
    );
    expect(settled.map((s) => s.status)).toEqual(calls.map((c) => (c === bad ? "rejected" : "fulfilled")));
    const good = calls.filter((c) => c !== bad);
    expect(await stored(good.map((c) => c.event.id))).toEqual({
      events: good.length,
      deliveries: good.flatMap((c) => c.deliveries.map((d) => d.id)).sort(),
    });
    expect(await stored([bad.event.id])).toEqual({ events: 0, deliveries: [] });
  });
});
