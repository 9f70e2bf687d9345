// Storage of erasure records and of project settings (ADR 15).
import type { Page, PageRequest, Scope } from "./paging.ts";

/** What one erasure did: which subject, and how much it removed. The subject's recipient is not kept. */
export interface ErasureRecord {
  id: string;
  tenantId: string;
  projectId: string;
  subject: "resource_id" | "recipient";
  /** The resource id erased (lowercase); null for an erasure by recipient. */
  resourceId: string | null;
  eventsErased: number;
  deliveriesErased: number;
  deliveriesCancelled: number;
  createdAt: Date;
}

export interface ErasureRepository {
  insert(record: ErasureRecord): Promise<void>;
  get(scope: Scope, id: string): Promise<ErasureRecord | null>;
  /** The project's erasures, newest first. */
  list(scope: Scope, page: PageRequest): Promise<Page<ErasureRecord>>;
  /** Deletes records created before `before` (of one project only, when given); returns how many. */
  deleteCreatedBefore(before: Date, scope?: Scope): Promise<number>;
}

/** A project's own settings; absent fields follow the server's configuration. */
export interface ProjectSettings {
  tenantId: string;
  projectId: string;
  /** How long its events and delivery records are kept; null: HERALD_RETENTION. */
  retentionMs: number | null;
  updatedAt: Date;
}

export interface SettingsRepository {
  get(scope: Scope): Promise<ProjectSettings | null>;
  /** Writes the project's settings whole (one record per project). */
  put(settings: ProjectSettings): Promise<void>;
  /** Every project with a retention of its own. */
  withRetention(): Promise<ProjectSettings[]>;
}
