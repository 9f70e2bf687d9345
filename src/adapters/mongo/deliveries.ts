import type { Collection, Filter } from "mongodb";
import type {
  AttemptResult,
  DeliveryFilter,
  DeliveryRepository,
  DueRequest,
} from "../../app/ports/deliveries.ts";
import type { Page, PageRequest, Scope } from "../../app/ports/paging.ts";
import type { Delivery } from "../../domain/delivery.ts";
import { shardOf } from "../../domain/shards.ts";
import { naturalBatch, PUBLISH_BATCHING } from "../natural-batch.ts";
import { resultWriter } from "./deliveries-record.ts";
import { type DeliveryDoc, deliveryFromDoc, deliveryToDoc } from "./documents/deliveries.ts";
import { insertAnswers } from "./errors.ts";
import { afterCursor, fetchSize, NEWEST_FIRST, toPage } from "./paging.ts";

const unique = (xs: readonly string[]) => [...new Set(xs)];
const pairKey = (eventId: string, webhookId: string) => `${eventId}/${webhookId}`;

export class MongoDeliveries implements DeliveryRepository {
  private readonly col: Collection<DeliveryDoc>;
  constructor(col: Collection<DeliveryDoc>) {
    this.col = col;
    this.writeResults = resultWriter(col, (ds) => this.insertMany(ds));
  }

  /**
   * Concurrent callers' records (publishes' fan-outs, the engine's follow-ups) go as one unordered
   * insert (natural-batch.ts). Unordered, so one existing id does not stop the rest; existing records
   * stay as they are. A caller fails only for a write error of one of its own records.
   */
  private readonly insertBatched = naturalBatch<readonly Delivery[], void>(async (calls) => {
    const docs = calls.flatMap((c) => c.map(deliveryToDoc));
    const answers = await insertAnswers(() => this.col.insertMany(docs, { ordered: false }), docs.length);
    let at = 0;
    return calls.map((c) => {
      const own = answers.slice(at, at + c.length);
      at += c.length;
      const failed = own.find((a) => "error" in a);
      return failed ?? { ok: undefined };
    });
  }, PUBLISH_BATCHING);

  async insertMany(deliveries: readonly Delivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.insertBatched(deliveries);
  }

  async get(scope: Scope, id: string): Promise<Delivery | null> {
    const doc = await this.col.findOne({ _id: id, tenant_id: scope.tenantId, project_id: scope.projectId });
    return doc ? deliveryFromDoc(doc) : null;
  }

  async list(scope: Scope, webhookId: string, f: DeliveryFilter, page: PageRequest): Promise<Page<Delivery>> {
    const query: Filter<DeliveryDoc> = {
      tenant_id: scope.tenantId,
      project_id: scope.projectId,
      webhook_id: webhookId,
    };
    withDeliveryFilter(query, f);
    const docs = await this.col
      .find(afterCursor(query, page.cursor))
      .sort(NEWEST_FIRST)
      .limit(fetchSize(page))
      .toArray();
    return toPage(docs, page, deliveryFromDoc);
  }

  async maxAttempts(pairs: readonly { eventId: string; webhookId: string }[]): Promise<Map<string, number>> {
    const out = new Map(pairs.map((p) => [pairKey(p.eventId, p.webhookId), 0]));
    if (pairs.length === 0) return out;
    // One covered query over the (event, endpoint) index; pairs nobody asked for are dropped here.
    const rows = await this.col
      .find({
        event_id: { $in: unique(pairs.map((p) => p.eventId)) },
        webhook_id: { $in: unique(pairs.map((p) => p.webhookId)) },
      })
      .project<Pick<DeliveryDoc, "event_id" | "webhook_id" | "attempt">>({
        _id: 0,
        event_id: 1,
        webhook_id: 1,
        attempt: 1,
      })
      .toArray();
    for (const r of rows) {
      const key = pairKey(r.event_id, r.webhook_id);
      const max = out.get(key);
      if (max !== undefined && r.attempt > max) out.set(key, r.attempt);
    }
    return out;
  }

  async latestForEvents(webhookId: string, eventIds: readonly string[]): Promise<Map<string, Delivery>> {
    const out = new Map<string, Delivery>();
    if (eventIds.length === 0) return out;
    // Served by the (event, endpoint) index; a few records per event, so picking the latest here is cheap.
    const docs = await this.col
      .find({ event_id: { $in: unique(eventIds) }, webhook_id: webhookId })
      .toArray();
    for (const doc of docs) {
      const held = out.get(doc.event_id);
      if (!held || doc.attempt > held.attempt) out.set(doc.event_id, deliveryFromDoc(doc));
    }
    return out;
  }

  async cancelPending(scope: Scope, webhookId: string): Promise<number> {
    const r = await this.col.updateMany(
      { tenant_id: scope.tenantId, project_id: scope.projectId, webhook_id: webhookId, status: "pending" },
      { $set: { status: "cancelled", attempted_at: null, next_attempt_at: null } },
    );
    return r.modifiedCount;
  }

  /** One read: pending and due in the given shards, earliest first. Nothing is written (ADR 9). */
  async due(r: DueRequest): Promise<Delivery[]> {
    if (r.limit <= 0) return [];
    const query: Filter<DeliveryDoc> = { status: "pending", scheduled_at: { $lte: r.now } };
    if (r.shards !== null) query.shard = { $in: [...r.shards] };
    if (r.excludeWebhookIds.length > 0) query.webhook_id = { $nin: unique(r.excludeWebhookIds) };
    if (r.excludeIds.length > 0) query._id = { $nin: [...r.excludeIds] };
    // One batch: FerretDB v1 holds a PostgreSQL connection for a cursor left open between batches.
    const docs = await this.col
      .find(query)
      .sort({ scheduled_at: 1 })
      .limit(r.limit)
      .batchSize(r.limit)
      .toArray();
    return docs.map(deliveryFromDoc);
  }

  async postpone(ids: readonly string[], until: Date): Promise<void> {
    if (ids.length === 0) return;
    // `updateMany` on an `_id`, one statement per id, for the reason given in `record`.
    await this.col.bulkWrite(
      ids.map((id) => ({
        updateMany: { filter: { _id: id, status: "pending" }, update: { $set: { scheduled_at: until } } },
      })),
      { ordered: false },
    );
  }

  /** Served by the `webhook_pending` index: equality on the endpoint and status (FerretDB v1 pushes those down). */
  async head(webhookId: string): Promise<Delivery | null> {
    const [doc] = await this.col
      .find({ webhook_id: webhookId, status: "pending" })
      .sort({ sequence: 1, event_id: 1 })
      .limit(1)
      .toArray();
    return doc ? deliveryFromDoc(doc) : null;
  }

  async countPending(webhookIds: readonly string[]): Promise<Map<string, number>> {
    const counts = await Promise.all(
      unique(webhookIds).map(
        async (id) => [id, await this.col.countDocuments({ webhook_id: id, status: "pending" })] as const,
      ),
    );
    return new Map(counts);
  }

  /**
   * Results go in commands of a bounded size, smaller while the server's statements are slow (see
   * deliveries-record.ts), so that no write approaches the client's time limit.
   */
  private readonly writeResults: (results: readonly AttemptResult[]) => Promise<void>;

  async record(results: readonly AttemptResult[]): Promise<void> {
    await this.writeResults(results);
  }

  /**
   * Gives pending records written before shards existed (an upgrade) their shard; nothing to do on a
   * database that has none. Runs at start-up.
   */
  async backfillShards(): Promise<number> {
    const docs = await this.col
      .find({ status: "pending", shard: { $exists: false } })
      .project<Pick<DeliveryDoc, "_id" | "webhook_id">>({ _id: 1, webhook_id: 1 })
      .toArray();
    if (docs.length === 0) return 0;
    await this.col.bulkWrite(
      // `updateMany` on an `_id` for the reason given in `record`.
      docs.map((d) => ({
        updateMany: {
          filter: { _id: d._id },
          update: { $set: { shard: shardOf(d.webhook_id) } },
        },
      })),
      { ordered: false },
    );
    return docs.length;
  }

  async dueStats(now: Date): Promise<{ count: number; oldestScheduledAt: Date | null }> {
    const due = { status: "pending" as const, scheduled_at: { $lte: now } };
    const [count, oldest] = await Promise.all([
      this.col.countDocuments(due),
      this.col.findOne(due, { sort: { scheduled_at: 1 }, projection: { scheduled_at: 1 } }),
    ]);
    return { count, oldestScheduledAt: oldest?.scheduled_at ?? null };
  }

  async deleteCreatedBefore(before: Date, scope?: Scope): Promise<number> {
    const filter: Filter<DeliveryDoc> = { created_at: { $lt: before }, status: { $ne: "pending" } };
    if (scope) Object.assign(filter, { tenant_id: scope.tenantId, project_id: scope.projectId });
    const r = await this.col.deleteMany(filter);
    return r.deletedCount;
  }

  /**
   * Two batched writes of one equality statement per event (FerretDB v1 pushes equalities down, and
   * answers `event_id: {$in}` by reading every record): pending records are cancelled and marked first,
   * then every record not marked yet loses its response body and is marked.
   */
  async erase(
    scope: Scope,
    eventIds: readonly string[],
    at: Date,
  ): Promise<{ erased: number; cancelled: number }> {
    const events = unique(eventIds);
    if (events.length === 0) return { erased: 0, cancelled: 0 };
    const of = (eventId: string) => ({
      event_id: eventId,
      tenant_id: scope.tenantId,
      project_id: scope.projectId,
    });
    const cancelled = await this.col.bulkWrite(
      events.map((id) => ({
        updateMany: {
          filter: { ...of(id), status: "pending" as const },
          update: {
            $set: {
              status: "cancelled" as const,
              attempted_at: null,
              next_attempt_at: null,
              erased_at: at,
            },
          },
        },
      })),
      { ordered: false },
    );
    const rest = await this.col.bulkWrite(
      events.map((id) => ({
        updateMany: {
          filter: { ...of(id), erased_at: null },
          update: { $set: { response_body: null, erased_at: at } },
        },
      })),
      { ordered: false },
    );
    return {
      erased: cancelled.modifiedCount + rest.modifiedCount,
      cancelled: cancelled.modifiedCount,
    };
  }
}

/** Adds the API's delivery filters (status, event type, event id, creation window) to a query. */
export function withDeliveryFilter(query: Filter<DeliveryDoc>, f: DeliveryFilter): Filter<DeliveryDoc> {
  if (f.status !== undefined) query.status = f.status;
  if (f.eventType !== undefined) query.event_type = f.eventType;
  if (f.eventId !== undefined) query.event_id = f.eventId;
  if (f.since !== undefined || f.until !== undefined) {
    query.created_at = {
      ...(f.since !== undefined && { $gte: f.since }),
      ...(f.until !== undefined && { $lt: f.until }),
    };
  }
  return query;
}
