import type { Collection, Db, Filter } from "mongodb";
import type {
  AttemptSummary,
  ConsoleSessionKind,
  ConsoleSessionRecord,
  ConsoleSessionRepository,
  DeliveryInsights,
} from "../../app/ports/console.ts";
import type { DeliveryFilter } from "../../app/ports/deliveries.ts";
import type { Page, PageRequest, Scope } from "../../app/ports/paging.ts";
import type { Delivery } from "../../domain/delivery.ts";
import { COLLECTIONS } from "./collections.ts";
import { withDeliveryFilter } from "./deliveries.ts";
import { type DeliveryDoc, deliveryFromDoc } from "./documents/deliveries.ts";
import { guarded, isDuplicateKey, translate } from "./errors.ts";
import { afterCursor, fetchSize, NEWEST_FIRST, toPage } from "./paging.ts";

export const CONSOLE_SESSIONS = "console_sessions";
export const CONSOLE_REDEMPTIONS = "console_redemptions";

/** A console session, sign-in code or portal link as stored: snake_case, `_id` is the id. */
export interface ConsoleSessionDoc {
  _id: string;
  hash: string;
  kind: ConsoleSessionKind;
  tenant_id: string;
  project_id: string;
  webhook_ids: string[] | null;
  csrf_token: string;
  parent_id: string | null;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  revoked_at: Date | null;
}

const toDoc = (r: ConsoleSessionRecord): ConsoleSessionDoc => ({
  _id: r.id,
  hash: r.hash,
  kind: r.kind,
  tenant_id: r.tenantId,
  project_id: r.projectId,
  webhook_ids: r.webhookIds ? [...r.webhookIds] : null,
  csrf_token: r.csrfToken,
  parent_id: r.parentId,
  created_at: r.createdAt,
  expires_at: r.expiresAt,
  used_at: r.usedAt,
  revoked_at: r.revokedAt,
});

const fromDoc = (d: ConsoleSessionDoc): ConsoleSessionRecord => ({
  id: d._id,
  hash: d.hash,
  kind: d.kind,
  tenantId: d.tenant_id,
  projectId: d.project_id,
  webhookIds: d.webhook_ids,
  csrfToken: d.csrf_token,
  parentId: d.parent_id,
  createdAt: d.created_at,
  expiresAt: d.expires_at,
  usedAt: d.used_at,
  revokedAt: d.revoked_at,
});

/** One redemption of a single-use record; the unique _id makes "first redeemer wins" atomic. */
export interface RedemptionDoc {
  _id: string;
  at: Date;
}

export class MongoConsoleSessions implements ConsoleSessionRepository {
  private readonly col: Collection<ConsoleSessionDoc>;
  private readonly redemptions: Collection<RedemptionDoc>;
  constructor(col: Collection<ConsoleSessionDoc>, redemptions: Collection<RedemptionDoc>) {
    this.col = col;
    this.redemptions = redemptions;
  }

  async insert(record: ConsoleSessionRecord): Promise<void> {
    await this.col.insertOne(toDoc(record));
  }

  async findByHash(hash: string): Promise<ConsoleSessionRecord | null> {
    const d = await this.col.findOne({ hash });
    return d ? fromDoc(d) : null;
  }

  async get(id: string): Promise<ConsoleSessionRecord | null> {
    const d = await this.col.findOne({ _id: id });
    return d ? fromDoc(d) : null;
  }

  async consume(hash: string, at: Date): Promise<ConsoleSessionRecord | null> {
    const d = await this.col.findOne({ hash });
    if (!d || d.used_at !== null || d.revoked_at !== null) return null;
    // An insert with a unique _id, not a conditional update: FerretDB v1 reads and writes a conditional
    // update in two steps, so two concurrent redemptions could both match used_at: null.
    try {
      await this.redemptions.insertOne({ _id: d._id, at });
    } catch (e) {
      if (isDuplicateKey(e)) return null;
      throw e;
    }
    await this.col.updateOne({ _id: d._id }, { $set: { used_at: at } });
    return fromDoc({ ...d, used_at: at });
  }

  async revoke(scope: Scope, kind: ConsoleSessionKind, id: string, at: Date): Promise<boolean> {
    const r = await this.col.updateOne(
      { _id: id, tenant_id: scope.tenantId, project_id: scope.projectId, kind, revoked_at: null },
      { $set: { revoked_at: at } },
    );
    return r.modifiedCount === 1;
  }

  async deleteExpiredBefore(before: Date): Promise<number> {
    const expired = await this.col
      .find({ expires_at: { $lt: before } }, { projection: { _id: 1 } })
      .toArray();
    if (expired.length === 0) return 0;
    const ids = expired.map((d) => d._id);
    await this.redemptions.deleteMany({ _id: { $in: ids } });
    const r = await this.col.deleteMany({ _id: { $in: ids } });
    return r.deletedCount;
  }
}

/** Delivery insights read from the deliveries collection, by its stored field names (documents/deliveries.ts). */
export class MongoDeliveryInsights implements DeliveryInsights {
  private readonly col: Collection<DeliveryDoc>;
  constructor(col: Collection<DeliveryDoc>) {
    this.col = col;
  }

  private scoped(scope: Scope): Filter<DeliveryDoc> {
    return { tenant_id: scope.tenantId, project_id: scope.projectId };
  }

  async attemptsSince(scope: Scope, since: Date, limit: number): Promise<AttemptSummary[]> {
    const docs = await this.col
      .find(
        { ...this.scoped(scope), attempted_at: { $gte: since } },
        { projection: { webhook_id: 1, status: 1, attempted_at: 1 } },
      )
      .sort({ attempted_at: -1 })
      .limit(limit)
      .toArray();
    return docs.map((d) => ({ webhookId: d.webhook_id, status: d.status, attemptedAt: d.attempted_at! }));
  }

  async lastSuccess(scope: Scope, webhookIds: readonly string[]): Promise<Map<string, Date>> {
    const found = await Promise.all(
      webhookIds.map((id) =>
        this.col.findOne(
          { ...this.scoped(scope), webhook_id: id, status: "succeeded" },
          { sort: { attempted_at: -1 }, projection: { attempted_at: 1 } },
        ),
      ),
    );
    const out = new Map<string, Date>();
    webhookIds.forEach((id, i) => {
      const at = found[i]?.attempted_at;
      if (at) out.set(id, at);
    });
    return out;
  }

  async list(
    scope: Scope,
    webhookIds: readonly string[] | null,
    f: DeliveryFilter,
    page: PageRequest,
  ): Promise<Page<Delivery>> {
    const query: Filter<DeliveryDoc> = this.scoped(scope);
    if (webhookIds !== null) query.webhook_id = { $in: [...webhookIds] };
    withDeliveryFilter(query, f);
    const docs = await this.col
      .find(afterCursor(query, page.cursor))
      .sort(NEWEST_FIRST)
      .limit(fetchSize(page))
      .toArray();
    return toPage(docs, page, deliveryFromDoc);
  }

  async changedSince(scope: Scope, since: Date, limit: number): Promise<Delivery[]> {
    const [created, attempted] = await Promise.all([
      this.col
        .find({ ...this.scoped(scope), created_at: { $gte: since } })
        .sort({ created_at: 1 })
        .limit(limit)
        .toArray(),
      this.col
        .find({ ...this.scoped(scope), attempted_at: { $gte: since } })
        .sort({ attempted_at: 1 })
        .limit(limit)
        .toArray(),
    ]);
    const byId = new Map<string, DeliveryDoc>();
    for (const d of [...created, ...attempted]) byId.set(d._id, d);
    const at = (d: DeliveryDoc) => Math.max(d.created_at.getTime(), d.attempted_at?.getTime() ?? 0);
    return [...byId.values()]
      .sort((a, b) => at(a) - at(b))
      .slice(0, limit)
      .map(deliveryFromDoc);
  }

  async dueStats(
    scope: Scope,
    now: Date,
    webhookIds?: readonly string[] | null,
  ): Promise<{ count: number; oldestScheduledAt: Date | null }> {
    const due: Filter<DeliveryDoc> = {
      ...this.scoped(scope),
      status: "pending",
      scheduled_at: { $lte: now },
    };
    if (webhookIds != null) due.webhook_id = { $in: [...webhookIds] };
    const [count, oldest] = await Promise.all([
      this.col.countDocuments(due),
      this.col.findOne(due, { sort: { scheduled_at: 1 }, projection: { scheduled_at: 1 } }),
    ]);
    return { count, oldestScheduledAt: oldest?.scheduled_at ?? null };
  }
}

export interface MongoConsoleStore {
  sessions: ConsoleSessionRepository;
  insights: DeliveryInsights;
}

/** The console's storage over a Herald database; creates its index first. Outages become StoreUnavailableError. */
export async function createMongoConsoleStore(db: Db): Promise<MongoConsoleStore> {
  const sessions = db.collection<ConsoleSessionDoc>(CONSOLE_SESSIONS);
  try {
    await sessions.createIndex({ hash: 1 }, { name: "hash_unique", unique: true });
    await sessions.createIndex({ expires_at: 1 }, { name: "expires_at" });
  } catch (e) {
    throw translate(e);
  }
  return {
    sessions: guarded(new MongoConsoleSessions(sessions, db.collection<RedemptionDoc>(CONSOLE_REDEMPTIONS))),
    insights: guarded(new MongoDeliveryInsights(db.collection<DeliveryDoc>(COLLECTIONS.deliveries))),
  };
}
