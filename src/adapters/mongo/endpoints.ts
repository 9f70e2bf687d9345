import type { Collection, Filter } from "mongodb";
import type { EndpointFilter, EndpointPatch, EndpointRepository } from "../../app/ports/endpoints.ts";
import type { Page, PageRequest, Scope } from "../../app/ports/paging.ts";
import type { DisabledReason, Endpoint } from "../../domain/endpoint.ts";
import type { EventType } from "../../domain/event-catalog.ts";
import { naturalBatch, PUBLISH_BATCHING } from "../natural-batch.ts";
import {
  type EndpointDoc,
  endpointFromDoc,
  endpointPatchToSet,
  endpointToDoc,
} from "./documents/endpoints.ts";
import { inOrderOf } from "./documents/order.ts";
import { afterCursor, fetchSize, NEWEST_FIRST, toPage } from "./paging.ts";

const scoped = (scope: Scope) => ({ tenant_id: scope.tenantId, project_id: scope.projectId });

export class MongoEndpoints implements EndpointRepository {
  private readonly col: Collection<EndpointDoc>;
  constructor(col: Collection<EndpointDoc>) {
    this.col = col;
  }

  async listFifo(): Promise<string[]> {
    const docs = await this.col
      .find({ ordering: "fifo" })
      .project<Pick<EndpointDoc, "_id">>({ _id: 1 })
      .toArray();
    return docs.map((d) => d._id);
  }

  async insert(endpoint: Endpoint): Promise<void> {
    await this.col.insertOne(endpointToDoc(endpoint));
  }

  async get(scope: Scope, id: string): Promise<Endpoint | null> {
    const doc = await this.col.findOne({ _id: id, ...scoped(scope) });
    return doc ? endpointFromDoc(doc) : null;
  }

  async getMany(ids: readonly string[]): Promise<Endpoint[]> {
    if (ids.length === 0) return [];
    const docs = await this.col.find({ _id: { $in: [...new Set(ids)] } }).toArray();
    return inOrderOf(ids, docs).map(endpointFromDoc);
  }

  async list(scope: Scope, filter: EndpointFilter, page: PageRequest): Promise<Page<Endpoint>> {
    const query: Filter<EndpointDoc> = { ...scoped(scope) };
    if (filter.enabled !== undefined) query.enabled = filter.enabled;
    if (filter.event !== undefined) query.events = filter.event;
    const docs = await this.col
      .find(afterCursor(query, page.cursor))
      .sort(NEWEST_FIRST)
      .limit(fetchSize(page))
      .toArray();
    return toPage(docs, page, endpointFromDoc);
  }

  /**
   * Every publish looks up its subscribers; concurrent publishes' lookups go together (natural-batch.ts),
   * one read per distinct project and event type among them, so a burst of one type costs one read.
   */
  private readonly subscribedBatched = naturalBatch<{ scope: Scope; type: EventType }, Endpoint[]>(
    async (asks) => {
      const key = (a: { scope: Scope; type: EventType }) =>
        JSON.stringify([a.scope.tenantId, a.scope.projectId, a.type]);
      const distinct = new Map(asks.map((a) => [key(a), a]));
      const found = new Map(
        await Promise.all(
          [...distinct].map(async ([k, a]) => {
            const docs = await this.col
              .find({ project_id: a.scope.projectId, events: a.type, tenant_id: a.scope.tenantId })
              .toArray();
            return [k, docs] as const;
          }),
        ),
      );
      return asks.map((a) => ({ ok: (found.get(key(a)) ?? []).map(endpointFromDoc) }));
    },
    PUBLISH_BATCHING,
  );

  async listSubscribed(scope: Scope, type: EventType): Promise<Endpoint[]> {
    return this.subscribedBatched({ scope, type });
  }

  async update(scope: Scope, id: string, patch: EndpointPatch): Promise<Endpoint | null> {
    const doc = await this.col.findOneAndUpdate(
      { _id: id, ...scoped(scope) },
      { $set: endpointPatchToSet(patch) },
      { returnDocument: "after" },
    );
    return doc ? endpointFromDoc(doc) : null;
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    const r = await this.col.deleteOne({ _id: id, ...scoped(scope) });
    return r.deletedCount === 1;
  }

  async markSucceeded(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.col.updateMany(
      { _id: { $in: [...new Set(ids)] }, failing_since: { $ne: null } },
      { $set: { failing_since: null } },
    );
  }

  async markFailing(ids: readonly string[], at: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.col.updateMany(
      { _id: { $in: [...new Set(ids)] }, failing_since: null },
      { $set: { failing_since: at, failing_notice: null } },
    );
  }

  async listUnreported(kind: "failing" | "disabled", before: Date, limit: number): Promise<Endpoint[]> {
    if (limit <= 0) return [];
    // `null` also matches a document stored before the field existed; a range never matches null.
    const query: Filter<EndpointDoc> =
      kind === "failing"
        ? { enabled: true, failing_since: { $lte: before }, failing_notice: null }
        : { enabled: false, disabled_at: { $lte: before }, disabled_notice: null };
    const docs = await this.col
      .find(query)
      .sort(kind === "failing" ? { failing_since: 1 } : { disabled_at: 1 })
      .limit(limit)
      .toArray();
    return docs.map(endpointFromDoc);
  }

  async markReported(id: string, kind: "failing" | "disabled", at: Date): Promise<boolean> {
    // Not atomic on FerretDB v1 (its conditional updates are a read then a write), and need not be: every
    // writer writes the same value, and a streak or disable that ended meanwhile is left as it is or
    // reported as published, which it was (ADR 20).
    const r =
      kind === "failing"
        ? await this.col.updateOne({ _id: id, failing_since: at }, { $set: { failing_notice: at } })
        : await this.col.updateOne({ _id: id, disabled_at: at }, { $set: { disabled_notice: at } });
    return r.matchedCount === 1;
  }

  async listFailingSince(before: Date, limit: number): Promise<Endpoint[]> {
    if (limit <= 0) return [];
    // A range on a date never matches null, so endpoints without a streak are left out by the index.
    const docs = await this.col
      .find({ enabled: true, failing_since: { $lte: before } })
      .sort({ failing_since: 1 })
      .limit(limit)
      .toArray();
    return docs.map(endpointFromDoc);
  }

  async disable(id: string, reason: DisabledReason, at: Date): Promise<boolean> {
    const r = await this.col.updateOne(
      { _id: id, enabled: true },
      {
        $set: {
          enabled: false,
          disabled_reason: reason,
          updated_at: at,
          disabled_at: at,
          disabled_notice: null,
        },
      },
    );
    return r.matchedCount === 1;
  }
}
