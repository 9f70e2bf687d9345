import type { AnyBulkWriteOperation, Collection, Filter } from "mongodb";
import { candidateWindow, pickWithinRoom } from "../../app/claim-room.ts";
import type {
  AttemptResult,
  ClaimRequest,
  DeliveryFilter,
  DeliveryRepository,
  LeasedDelivery,
} from "../../app/ports/deliveries.ts";
import type { Page, PageRequest, Scope } from "../../app/ports/paging.ts";
import type { Delivery } from "../../domain/delivery.ts";
import { type DeliveryDoc, type LeaseDoc, UNLEASED } from "./documents.ts";
import { insertIgnoringDuplicates } from "./errors.ts";
import { LeaseLedger } from "./leases.ts";
import { deliveryFromDoc, deliveryToDoc } from "./mappers.ts";
import { afterCursor, fetchSize, NEWEST_FIRST, toPage } from "./paging.ts";

/** Rounds of find-then-lease one claim makes when other claimers took some of what it saw. */
const CLAIM_ROUNDS = 3;

const unleased = { lease_owner: null, lease_expires_at: UNLEASED };
const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const unique = (xs: readonly string[]) => [...new Set(xs)];
const pairKey = (eventId: string, webhookId: string) => `${eventId}/${webhookId}`;

export class MongoDeliveries implements DeliveryRepository {
  private readonly leases: LeaseLedger;

  constructor(
    private readonly col: Collection<DeliveryDoc>,
    leases: Collection<LeaseDoc>,
  ) {
    this.leases = new LeaseLedger(leases);
  }

  async insertMany(deliveries: readonly Delivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    // Unordered, so one existing id does not stop the rest; existing records stay as they are.
    await insertIgnoringDuplicates(() =>
      this.col.insertMany(deliveries.map(deliveryToDoc), { ordered: false }),
    );
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

  async cancelPending(webhookId: string, _at: Date): Promise<number> {
    const r = await this.col.updateMany(
      { webhook_id: webhookId, status: "pending" },
      { $set: { status: "cancelled", attempted_at: null, next_attempt_at: null, ...unleased } },
    );
    return r.modifiedCount;
  }

  /**
   * Leases without a transaction, in four round trips: find due records; insert one lease document per
   * record for its next generation (the unique _id lets exactly one claimer win each); stamp the won
   * records with this call's claim token; read back what carries the token and is still pending.
   */
  async claimDue(r: ClaimRequest): Promise<LeasedDelivery[]> {
    if (r.limit <= 0) return [];
    const token = `${r.owner}:${globalThis.crypto.randomUUID()}`;
    const leaseExpiresAt = new Date(r.now.getTime() + r.leaseMs);
    const due: Filter<DeliveryDoc> = {
      status: "pending",
      scheduled_at: { $lte: r.now },
      lease_expires_at: { $lte: r.now },
    };
    if (r.excludeWebhookIds.length > 0) due.webhook_id = { $nin: unique(r.excludeWebhookIds) };

    const won: string[] = [];
    const wonEndpoint = new Map<string, string>();
    const expired = new Set<string>();
    for (let round = 0; round < CLAIM_ROUNDS && won.length < r.limit; round++) {
      const seen = await this.col
        .find(won.length ? { ...due, _id: { $nin: won } } : due)
        .sort({ scheduled_at: 1 })
        .limit(candidateWindow(r))
        .project<Pick<DeliveryDoc, "_id" | "lease_version" | "webhook_id" | "lease_expires_at">>({
          _id: 1,
          lease_version: 1,
          webhook_id: 1,
          lease_expires_at: 1,
        })
        .toArray();
      if (seen.length === 0) break;
      // Room left per endpoint, counting what earlier rounds of this claim already won.
      const busy: Record<string, number> = { ...r.busy };
      for (const id of won) {
        const w = wonEndpoint.get(id);
        if (w) busy[w] = (busy[w] ?? 0) + 1;
      }
      const candidates = pickWithinRoom(
        seen.map((c) => ({ ...c, webhookId: c.webhook_id })),
        { ...r, limit: r.limit - won.length, busy },
      );
      if (candidates.length === 0) break;
      for (const c of candidates) {
        wonEndpoint.set(c._id, c.webhook_id);
        // Due with a lease that ran out (a released one is reset to UNLEASED): its owner died.
        if (c.lease_expires_at.getTime() > UNLEASED.getTime()) expired.add(c._id);
      }
      const generations = await this.leases.acquire(
        candidates.map((c) => ({ id: c._id, version: c.lease_version })),
        token,
        r.now,
        leaseExpiresAt,
      );
      if (generations.length > 0) {
        await this.col.bulkWrite(
          generations.map((g) => ({
            updateOne: {
              filter: { _id: g.id, status: "pending", lease_version: { $lt: g.generation } },
              update: {
                $set: { lease_owner: token, lease_expires_at: leaseExpiresAt, lease_version: g.generation },
              },
            },
          })),
          { ordered: false },
        );
        won.push(...generations.map((g) => g.id));
      }
      // Everything seen was won: either the limit is reached or nothing more is due.
      if (generations.length === candidates.length) break;
    }
    if (won.length === 0) return [];
    const docs = await this.col
      .find({ _id: { $in: won }, status: "pending", lease_owner: token })
      .sort({ scheduled_at: 1 })
      .toArray();
    return docs.map((d) => ({
      ...deliveryFromDoc(d),
      leaseOwner: token,
      leaseExpiresAt,
      recovered: expired.has(d._id),
    }));
  }

  async complete(results: readonly AttemptResult[]): Promise<void> {
    if (results.length === 0) return;
    // The follow-up attempts go in first: a crash before the finalising write leaves the current record
    // pending, so it is sent again after its lease expires; a retry is never lost.
    await this.insertMany(results.flatMap((r) => (r.next ? [r.next] : [])));
    const ops: AnyBulkWriteOperation<DeliveryDoc>[] = results.map((r) => ({
      updateOne: {
        filter: { _id: r.id, status: "pending", lease_owner: r.leaseOwner },
        update: {
          $set: {
            status: r.status,
            response_status: r.responseStatus,
            response_body: r.responseBody,
            error: r.error,
            duration_ms: r.durationMs,
            attempted_at: r.attemptedAt,
            next_attempt_at: r.nextAttemptAt,
            ...unleased,
          },
        },
      },
    }));
    await this.col.bulkWrite(ops, { ordered: false });
  }

  /** `owner` is either the claim token a lease carries or the owner that claimed it (all its claims). */
  async release(owner: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.col.updateMany(
      {
        _id: { $in: unique(ids) },
        status: "pending",
        $or: [{ lease_owner: owner }, { lease_owner: { $regex: `^${escapeRegex(owner)}:` } }],
      },
      { $set: unleased },
    );
  }

  async dueStats(now: Date): Promise<{ count: number; oldestScheduledAt: Date | null }> {
    const due = { status: "pending" as const, scheduled_at: { $lte: now } };
    const [count, oldest] = await Promise.all([
      this.col.countDocuments(due),
      this.col.findOne(due, { sort: { scheduled_at: 1 }, projection: { scheduled_at: 1 } }),
    ]);
    return { count, oldestScheduledAt: oldest?.scheduled_at ?? null };
  }

  async nextDueAt(): Promise<Date | null> {
    const next = await this.col.findOne(
      { status: "pending" },
      { sort: { scheduled_at: 1 }, projection: { scheduled_at: 1 } },
    );
    return next?.scheduled_at ?? null;
  }

  async deleteCreatedBefore(before: Date): Promise<number> {
    const [r] = await Promise.all([
      this.col.deleteMany({ created_at: { $lt: before }, status: { $ne: "pending" } }),
      this.leases.deleteExpiredBefore(before),
    ]);
    return r.deletedCount;
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
