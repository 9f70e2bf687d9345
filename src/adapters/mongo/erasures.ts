import type { Collection, Filter } from "mongodb";
import type {
  ErasureRecord,
  ErasureRepository,
  ProjectSettings,
  SettingsRepository,
} from "../../app/ports/erasures.ts";
import type { Page, PageRequest, Scope } from "../../app/ports/paging.ts";
import type { ErasureDoc } from "./documents/erasures.ts";
import type { ProjectSettingsDoc } from "./documents/settings.ts";
import { isDuplicateKey } from "./errors.ts";
import { afterCursor, fetchSize, NEWEST_FIRST, toPage } from "./paging.ts";

const erasureToDoc = (r: ErasureRecord): ErasureDoc => ({
  _id: r.id,
  tenant_id: r.tenantId,
  project_id: r.projectId,
  subject: r.subject,
  resource_id: r.resourceId,
  events_erased: r.eventsErased,
  deliveries_erased: r.deliveriesErased,
  deliveries_cancelled: r.deliveriesCancelled,
  created_at: r.createdAt,
});

const erasureFromDoc = (d: ErasureDoc): ErasureRecord => ({
  id: d._id,
  tenantId: d.tenant_id,
  projectId: d.project_id,
  subject: d.subject,
  resourceId: d.resource_id,
  eventsErased: d.events_erased,
  deliveriesErased: d.deliveries_erased,
  deliveriesCancelled: d.deliveries_cancelled,
  createdAt: d.created_at,
});

export class MongoErasures implements ErasureRepository {
  private readonly col: Collection<ErasureDoc>;
  constructor(col: Collection<ErasureDoc>) {
    this.col = col;
  }

  async insert(record: ErasureRecord): Promise<void> {
    try {
      await this.col.insertOne(erasureToDoc(record));
    } catch (e) {
      // A repeat of the same insert (a retried command) leaves the first one.
      if (!isDuplicateKey(e)) throw e;
    }
  }

  async get(scope: Scope, id: string): Promise<ErasureRecord | null> {
    const doc = await this.col.findOne({ _id: id, tenant_id: scope.tenantId, project_id: scope.projectId });
    return doc ? erasureFromDoc(doc) : null;
  }

  async list(scope: Scope, page: PageRequest): Promise<Page<ErasureRecord>> {
    const query: Filter<ErasureDoc> = { tenant_id: scope.tenantId, project_id: scope.projectId };
    const docs = await this.col
      .find(afterCursor(query, page.cursor))
      .sort(NEWEST_FIRST)
      .limit(fetchSize(page))
      .toArray();
    return toPage(docs, page, erasureFromDoc);
  }

  async deleteCreatedBefore(before: Date, scope?: Scope): Promise<number> {
    const filter: Filter<ErasureDoc> = { created_at: { $lt: before } };
    if (scope) Object.assign(filter, { tenant_id: scope.tenantId, project_id: scope.projectId });
    return (await this.col.deleteMany(filter)).deletedCount;
  }
}

const idOf = (s: Scope) => `${s.tenantId}/${s.projectId}`;

const settingsFromDoc = (d: ProjectSettingsDoc): ProjectSettings => ({
  tenantId: d.tenant_id,
  projectId: d.project_id,
  retentionMs: d.retention_ms,
  updatedAt: d.updated_at,
});

export class MongoSettings implements SettingsRepository {
  private readonly col: Collection<ProjectSettingsDoc>;
  constructor(col: Collection<ProjectSettingsDoc>) {
    this.col = col;
  }

  async get(scope: Scope): Promise<ProjectSettings | null> {
    const doc = await this.col.findOne({ _id: idOf(scope) });
    return doc ? settingsFromDoc(doc) : null;
  }

  async put(s: ProjectSettings): Promise<void> {
    await this.col.replaceOne(
      { _id: idOf(s) },
      {
        tenant_id: s.tenantId,
        project_id: s.projectId,
        retention_ms: s.retentionMs,
        updated_at: s.updatedAt,
      },
      { upsert: true },
    );
  }

  async withRetention(): Promise<ProjectSettings[]> {
    const docs = await this.col.find({ retention_ms: { $ne: null } }).toArray();
    return docs.map(settingsFromDoc);
  }
}
