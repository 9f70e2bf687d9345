import type { PendingQuery, Row, Sql } from "postgres";
import type { EventRepository, EventSubjects, StoredEvent, SubjectMatch } from "../../app/ports/events.ts";
import type { Scope } from "../../app/ports/paging.ts";
import type { Delivery } from "../../domain/delivery.ts";
import { type Answer, type NaturalBatchOptions, naturalBatch } from "../natural-batch.ts";
import { DUE_CHANNEL, type PublishCarrier } from "./due-signals.ts";
import { isUnavailable } from "./errors.ts";
import { type ProofCarrier, proofColumns } from "./process-lock.ts";
import { texts } from "./rows/arrays.ts";
import {
  deliveryColumns,
  deliveryRecords,
  firstDeliveryRecords,
  isFirstAttemptOf,
} from "./rows/deliveries.ts";
import { type EventRow, eventColumns, eventFromRow, eventRecords } from "./rows/events.ts";

/** One publish batch on its way at a time (MongoDB keeps two): a fifth fewer statements, as fast (ADR 18). */
export const POSTGRES_PUBLISH_BATCHING: NaturalBatchOptions = { parallel: 1, max: 500 };
/** One publish: an event and its first deliveries, written together or not at all. */
interface Publish {
  event: StoredEvent;
  deliveries: readonly Delivery[];
}

export class PostgresEvents implements EventRepository {
  private readonly publishBatched: (p: Publish) => Promise<boolean>;

  /**
   * `batching`: how concurrent publishes are grouped into one statement (natural-batch.ts). `carrier`:
   * the due channel, whose notifications of a publish's work for other processes' shards the publish
   * statement sends itself (ADR 30): no statement of their own, and in the publish's commit. `proofs`:
   * this process's proof of life, looked up by the publish statement when one is wanted (ADR 25).
   */
  private readonly sql: Sql;
  private readonly carrier: PublishCarrier | null;
  private readonly proofs: ProofCarrier | null;
  constructor(
    sql: Sql,
    batching: NaturalBatchOptions = POSTGRES_PUBLISH_BATCHING,
    carrier: PublishCarrier | null = null,
    proofs: ProofCarrier | null = null,
  ) {
    this.sql = sql;
    this.carrier = carrier;
    this.proofs = proofs;
    this.publishBatched = naturalBatch((calls: readonly Publish[]) => this.write(calls), batching);
  }

  async insert(event: StoredEvent): Promise<boolean> {
    return this.publishBatched({ event, deliveries: [] });
  }

  /**
   * The event and its deliveries in one statement, so atomic without a transaction; concurrent publishes
   * share that statement (each still answered for its own event).
   */
  async insertWithDeliveries(event: StoredEvent, deliveries: readonly Delivery[]): Promise<boolean> {
    const stray = deliveries.find((d) => d.eventId !== event.id);
    if (stray) throw new Error(`delivery ${stray.id} is of event ${stray.eventId}, not of ${event.id}`);
    return this.publishBatched({ event, deliveries });
  }

  /**
   * Writes a batch of publishes: each event whose id is free, with its deliveries; an event that exists
   * already writes nothing and answers false. The first call of an id goes now and any repeat of it in the
   * same batch after, so exactly one of them can win. When the statement fails for a reason other than an
   * outage, each call is tried alone, so one bad publish fails alone.
   */
  private async write(calls: readonly Publish[]): Promise<Answer<boolean>[]> {
    const seen = new Set<string>();
    const firsts: number[] = [];
    const repeats: number[] = [];
    for (const [i, c] of calls.entries()) {
      if (seen.has(c.event.id)) repeats.push(i);
      else {
        seen.add(c.event.id);
        firsts.push(i);
      }
    }
    const answers: Answer<boolean>[] = new Array(calls.length);
    const unique = firsts.map((i) => calls[i]!);
    try {
      const won = await this.insertAll(unique);
      for (const i of firsts) answers[i] = { ok: won.has(calls[i]!.event.id) };
    } catch (e) {
      const alone =
        unique.length === 1 || isUnavailable(e)
          ? unique.map(() => ({ error: e }))
          : (await Promise.all(unique.map((c) => this.write([c])))).map((a) => a[0]!);
      for (const [k, i] of firsts.entries()) answers[i] = alone[k]!;
    }
    if (repeats.length > 0) {
      const again = await this.write(repeats.map((i) => calls[i]!));
      for (const [k, i] of repeats.entries()) answers[i] = again[k]!;
    }
    return answers;
  }

  /** One statement: the events not stored yet, and the deliveries of exactly those. Answers the ids written. */
  private async insertAll(calls: readonly Publish[]): Promise<Set<string>> {
    const sql = this.sql;
    // In id order, so two batches that meet on the same ids take their row locks in the same order.
    const sorted = [...calls].sort((a, b) =>
      a.event.id < b.event.id ? -1 : a.event.id > b.event.id ? 1 : 0,
    );
    const events = sorted.map((c) => c.event);
    const deliveries = sorted.flatMap((c) => c.deliveries);
    const notices = this.carrier?.publishNotices(sorted) ?? [];
    // Each notice is sent only if its event is written here (a repeat writes and announces nothing).
    // Not referenced, a CTE that writes nothing would not run: the final SELECT joins its one row.
    const notify =
      notices.length === 0
        ? sql``
        : sql`, notified AS (
            SELECT count(pg_notify(${DUE_CHANNEL}, n.x->>1)) AS n
            FROM json_array_elements(${JSON.stringify(notices.map((x) => [x.eventId, x.payload]))}::text::json) AS n(x)
            JOIN written w ON w.id = n.x->>0
          )`;
    const from = notices.length === 0 ? sql`written` : sql`written, notified`;
    // The proof of life rides along when one is wanted: whether the lock's key is granted (ADR 25).
    const proof = this.proofs?.carry() ?? null;
    const proven = proofColumns(sql, proof);
    let rows: { id: string; proof?: boolean }[] = [];
    let notified = notices.length > 0;
    try {
      const tail = sql`${notify} SELECT id${proven} FROM ${from}`;
      rows = await this.insertRows(sorted, events, deliveries, tail).catch((e: unknown) => {
        // A publish never fails for its notifications (PostgreSQL's NOTIFY queue full, behind a listener
        // that stopped reading; a payload refused): written without them, the owners' reads find the work.
        if (!notified || isUnavailable(e)) throw e;
        notified = false;
        return this.insertRows(sorted, events, deliveries, sql`SELECT id${proven} FROM written`);
      });
    } finally {
      // No row (a repeat, a failure): its lookup and heartbeat never ran; the next check proves it.
      if (proof) this.proofs!.carried(proof, rows.length > 0 ? rows.some((r) => r.proof === true) : null);
    }
    const won = new Set(rows.map((r) => r.id));
    if (notified) {
      const noticed = new Set(notices.map((x) => x.eventId));
      this.carrier!.carried(
        sorted.flatMap((c) =>
          noticed.has(c.event.id) && won.has(c.event.id) ? c.deliveries.map((d) => d.id) : [],
        ),
      );
    }
    return won;
  }

  private async insertRows(
    sorted: readonly Publish[],
    events: StoredEvent[],
    deliveries: Delivery[],
    /** The notifications' CTE, if any, and the final SELECT of the ids written. */
    tail: PendingQuery<Row[]>,
  ): Promise<{ id: string; proof?: boolean }[]> {
    const sql = this.sql;
    if (sorted.every((c) => c.deliveries.every((d) => isFirstAttemptOf(d, c.event)))) {
      // What every publish writes: the deliveries' scope, type, times and sequence come from their event's row.
      return sql<{ id: string; proof?: boolean }[]>`
        WITH written AS (
          INSERT INTO events (${eventColumns(sql)})
          SELECT * FROM ${eventRecords(sql, events)}
          ON CONFLICT (id) DO NOTHING
          RETURNING id, tenant_id, project_id, type, created_at, sequence
        ), first_deliveries AS (
          INSERT INTO deliveries (id, tenant_id, project_id, webhook_id, event_id, event_type, attempt, trigger,
            status, url, scheduled_at, created_at, shard, sequence)
          SELECT d.id, w.tenant_id, w.project_id, d.webhook_id, w.id, w.type, 1, 'automatic',
            d.status, d.url, w.created_at, w.created_at, d.shard, w.sequence
          FROM ${firstDeliveryRecords(sql, deliveries)} JOIN written w ON w.id = d.event_id
          ON CONFLICT (id) DO NOTHING
        )${tail}`;
    }
    return sql<{ id: string; proof?: boolean }[]>`
      WITH written AS (
        INSERT INTO events (${eventColumns(sql)})
        SELECT * FROM ${eventRecords(sql, events)}
        ON CONFLICT (id) DO NOTHING
        RETURNING id
      ), first_deliveries AS (
        INSERT INTO deliveries (${deliveryColumns(sql)})
        SELECT d.* FROM ${deliveryRecords(sql, deliveries)}
        WHERE d.event_id IN (SELECT id FROM written)
        ON CONFLICT (id) DO NOTHING
      )${tail}`;
  }

  async get(scope: Scope, id: string): Promise<StoredEvent | null> {
    const [row] = await this.sql<EventRow[]>`
      SELECT * FROM events
      WHERE id = ${id} AND tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}`;
    return row ? eventFromRow(row) : null;
  }

  async getMany(ids: readonly string[]): Promise<StoredEvent[]> {
    if (ids.length === 0) return [];
    const rows = await this.sql<EventRow[]>`
      SELECT * FROM events WHERE id = ANY(${texts(this.sql, [...new Set(ids)])}::text[])`;
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.flatMap((id) => {
      const row = byId.get(id);
      return row ? [eventFromRow(row)] : [];
    });
  }

  async markFannedOut(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.sql`
      UPDATE events SET fanout_pending = false
      WHERE id = ANY(${texts(this.sql, [...new Set(ids)])}::text[]) AND fanout_pending`;
  }

  async listFanoutPending(before: Date, limit: number): Promise<StoredEvent[]> {
    if (limit <= 0) return [];
    const rows = await this.sql<EventRow[]>`
      SELECT * FROM events
      WHERE fanout_pending AND created_at <= ${before}
      ORDER BY created_at, id
      LIMIT ${limit}`;
    return rows.map(eventFromRow);
  }

  async listCreatedBetween(
    scope: Scope,
    since: Date,
    until: Date,
    limit: number,
    after?: string,
  ): Promise<StoredEvent[]> {
    if (limit <= 0) return [];
    const sql = this.sql;
    const inWindow = sql`tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}
      AND created_at < ${until}`;
    const rows =
      after === undefined
        ? await sql<EventRow[]>`
            SELECT * FROM events WHERE ${inWindow} AND created_at >= ${since}
            ORDER BY created_at, id LIMIT ${limit}`
        : // An `after` outside the scope or the window does not narrow the list (as in the other stores).
          // Otherwise the list starts at its time, so the index reads from there, not from `since`.
          await sql<EventRow[]>`
            WITH pivot AS (
              SELECT created_at, id FROM events WHERE id = ${after} AND ${inWindow} AND created_at >= ${since}
            )
            SELECT * FROM events
            WHERE ${inWindow} AND created_at >= coalesce((SELECT created_at FROM pivot), ${since})
              AND (NOT EXISTS (SELECT 1 FROM pivot) OR (created_at, id) > (SELECT created_at, id FROM pivot))
            ORDER BY created_at, id LIMIT ${limit}`;
    return rows.map(eventFromRow);
  }

  async deleteCreatedBefore(before: Date, scope?: Scope): Promise<number> {
    const sql = this.sql;
    const r = await sql`
      DELETE FROM events WHERE created_at < ${before}
      ${scope ? sql`AND tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}` : sql``}`;
    return r.count;
  }

  async idsAbout(scope: Scope, subject: SubjectMatch, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    const sql = this.sql;
    const match =
      "resourceId" in subject
        ? sql`resource_id = ${subject.resourceId}`
        : sql`recipient_key = ${subject.recipientKey}`;
    const rows = await sql<{ id: string }[]>`
      SELECT id FROM events
      WHERE ${match} AND tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}
      LIMIT ${limit}`;
    return rows.map((r) => r.id);
  }

  async deleteMany(scope: Scope, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const r = await this.sql`
      DELETE FROM events
      WHERE id = ANY(${texts(this.sql, [...new Set(ids)])}::text[])
        AND tenant_id = ${scope.tenantId} AND project_id = ${scope.projectId}`;
    return r.count;
  }

  async listWithoutSubjects(limit: number): Promise<StoredEvent[]> {
    if (limit <= 0) return [];
    const rows = await this.sql<EventRow[]>`SELECT * FROM events WHERE resource_id IS NULL LIMIT ${limit}`;
    return rows.map(eventFromRow);
  }

  async setSubjects(subjects: readonly EventSubjects[]): Promise<void> {
    if (subjects.length === 0) return;
    const text = (f: (s: EventSubjects) => string | null) => texts(this.sql, subjects.map(f));
    await this.sql`
      UPDATE events e SET resource_id = s.resource_id, recipient_key = s.recipient_key
      FROM unnest(${text((s) => s.id)}::text[], ${text((s) => s.resourceId)}::text[],
        ${text((s) => s.recipientKey)}::text[]) AS s(id, resource_id, recipient_key)
      WHERE e.id = s.id`;
  }
}
