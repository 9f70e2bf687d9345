import type { Collection, Filter } from "mongodb";
import type { EventRepository, EventSubjects, StoredEvent, SubjectMatch } from "../../app/ports/events.ts";
import type { Scope } from "../../app/ports/paging.ts";
import { naturalBatch, PUBLISH_BATCHING } from "../natural-batch.ts";
import { type EventDoc, eventFromDoc, eventToDoc } from "./documents/events.ts";
import { inOrderOf } from "./documents/order.ts";
import { insertAnswers } from "./errors.ts";

const OLDEST_FIRST = { created_at: 1, _id: 1 } as const;

export class MongoEvents implements EventRepository {
  private readonly col: Collection<EventDoc>;
  constructor(col: Collection<EventDoc>) {
    this.col = col;
  }

  /** Concurrent publishes' events go as one unordered insert (natural-batch.ts); `false` is a duplicate id. */
  private readonly insertBatched = naturalBatch<StoredEvent, boolean>(
    (events) =>
      insertAnswers(() => this.col.insertMany(events.map(eventToDoc), { ordered: false }), events.length),
    PUBLISH_BATCHING,
  );

  async insert(event: StoredEvent): Promise<boolean> {
    return this.insertBatched(event);
  }

  async get(scope: Scope, id: string): Promise<StoredEvent | null> {
    const doc = await this.col.findOne({ _id: id, tenant_id: scope.tenantId, project_id: scope.projectId });
    return doc ? eventFromDoc(doc) : null;
  }

  async getMany(ids: readonly string[]): Promise<StoredEvent[]> {
    if (ids.length === 0) return [];
    const docs = await this.col.find({ _id: { $in: [...new Set(ids)] } }).toArray();
    return inOrderOf(ids, docs).map(eventFromDoc);
  }

  async markFannedOut(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    // One statement per id, in one command: an equality on _id is looked up by its index everywhere,
    // where FerretDB v1 answers `_id: {$in: [...]}` by reading every event.
    await this.col.bulkWrite(
      [...new Set(ids)].map((id) => ({
        updateMany: { filter: { _id: id }, update: { $set: { fanout_pending: false } } },
      })),
      { ordered: false },
    );
  }

  async listFanoutPending(before: Date, limit: number): Promise<StoredEvent[]> {
    if (limit <= 0) return [];
    const docs = await this.col
      .find({ fanout_pending: true, created_at: { $lte: before } })
      .sort(OLDEST_FIRST)
      .limit(limit)
      .toArray();
    return docs.map(eventFromDoc);
  }

  async listCreatedBetween(
    scope: Scope,
    since: Date,
    until: Date,
    limit: number,
    after?: string,
  ): Promise<StoredEvent[]> {
    if (limit <= 0) return [];
    const inRange: Filter<EventDoc> = {
      tenant_id: scope.tenantId,
      project_id: scope.projectId,
      created_at: { $gte: since, $lt: until },
    };
    let query = inRange;
    if (after !== undefined) {
      // An `after` outside the scope or the window does not narrow the list (as in the memory twin).
      const pivot = await this.col.findOne({ ...inRange, _id: after }, { projection: { created_at: 1 } });
      if (pivot) {
        query = {
          ...inRange,
          created_at: { $gte: pivot.created_at, $lt: until },
          $or: [{ created_at: { $gt: pivot.created_at } }, { _id: { $gt: after } }],
        };
      }
    }
    const docs = await this.col.find(query).sort(OLDEST_FIRST).limit(limit).toArray();
    return docs.map(eventFromDoc);
  }

  async deleteCreatedBefore(before: Date, scope?: Scope): Promise<number> {
    const filter: Filter<EventDoc> = { created_at: { $lt: before } };
    if (scope) Object.assign(filter, { tenant_id: scope.tenantId, project_id: scope.projectId });
    const r = await this.col.deleteMany(filter);
    return r.deletedCount;
  }

  async idsAbout(scope: Scope, subject: SubjectMatch, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    const match: Filter<EventDoc> =
      "resourceId" in subject ? { resource_id: subject.resourceId } : { recipient_key: subject.recipientKey };
    const docs = await this.col
      .find({ ...match, tenant_id: scope.tenantId, project_id: scope.projectId })
      .project<Pick<EventDoc, "_id">>({ _id: 1 })
      .limit(limit)
      .toArray();
    return docs.map((d) => d._id);
  }

  async deleteMany(scope: Scope, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    // One equality statement per id (see markFannedOut).
    const r = await this.col.bulkWrite(
      [...new Set(ids)].map((id) => ({
        deleteMany: { filter: { _id: id, tenant_id: scope.tenantId, project_id: scope.projectId } },
      })),
      { ordered: false },
    );
    return r.deletedCount;
  }

  async listWithoutSubjects(limit: number): Promise<StoredEvent[]> {
    if (limit <= 0) return [];
    // Equal to null: absent too, read from the `resource` index.
    const docs = await this.col.find({ resource_id: null }).limit(limit).toArray();
    return docs.map(eventFromDoc);
  }

  async setSubjects(subjects: readonly EventSubjects[]): Promise<void> {
    if (subjects.length === 0) return;
    await this.col.bulkWrite(
      subjects.map((s) => ({
        updateMany: {
          filter: { _id: s.id },
          update:
            s.recipientKey === null
              ? { $set: { resource_id: s.resourceId } }
              : { $set: { resource_id: s.resourceId, recipient_key: s.recipientKey } },
        },
      })),
      { ordered: false },
    );
  }
}
