import type {
  ErasureRecord,
  ErasureRepository,
  ProjectSettings,
  SettingsRepository,
} from "../../app/ports/erasures.ts";
import type { Page, PageRequest, Scope } from "../../app/ports/paging.ts";
import { copy, inScope } from "./copies.ts";
import { pageOf } from "./paging.ts";

export class MemoryErasures implements ErasureRepository {
  readonly rows = new Map<string, ErasureRecord>();

  async insert(record: ErasureRecord): Promise<void> {
    if (!this.rows.has(record.id)) this.rows.set(record.id, copy(record));
  }

  async get(scope: Scope, id: string): Promise<ErasureRecord | null> {
    const r = this.rows.get(id);
    return r && inScope(scope, r) ? copy(r) : null;
  }

  async list(scope: Scope, page: PageRequest): Promise<Page<ErasureRecord>> {
    const p = pageOf(
      [...this.rows.values()].filter((r) => inScope(scope, r)),
      page,
    );
    return { data: p.data.map(copy), next: p.next };
  }

  async deleteCreatedBefore(before: Date, scope?: Scope): Promise<number> {
    let n = 0;
    for (const [id, r] of this.rows) {
      if (r.createdAt.getTime() < before.getTime() && (!scope || inScope(scope, r))) {
        this.rows.delete(id);
        n++;
      }
    }
    return n;
  }
}

const keyOf = (s: Scope) => `${s.tenantId}/${s.projectId}`;

export class MemorySettings implements SettingsRepository {
  readonly rows = new Map<string, ProjectSettings>();

  async get(scope: Scope): Promise<ProjectSettings | null> {
    const s = this.rows.get(keyOf(scope));
    return s ? copy(s) : null;
  }

  async put(settings: ProjectSettings): Promise<void> {
    this.rows.set(keyOf(settings), copy(settings));
  }

  async withRetention(): Promise<ProjectSettings[]> {
    return [...this.rows.values()].filter((s) => s.retentionMs !== null).map(copy);
  }
}
