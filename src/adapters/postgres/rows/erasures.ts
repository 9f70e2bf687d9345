// Erasures and project settings as their tables hold them (the ports' erasures.ts holds both).
import type { ErasureRecord, ProjectSettings } from "../../../app/ports/erasures.ts";

export interface ErasureRow {
  id: string;
  tenant_id: string;
  project_id: string;
  subject: ErasureRecord["subject"];
  resource_id: string | null;
  events_erased: number;
  deliveries_erased: number;
  deliveries_cancelled: number;
  created_at: Date;
}

export const erasureFromRow = (r: ErasureRow): ErasureRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  projectId: r.project_id,
  subject: r.subject,
  resourceId: r.resource_id,
  eventsErased: r.events_erased,
  deliveriesErased: r.deliveries_erased,
  deliveriesCancelled: r.deliveries_cancelled,
  createdAt: r.created_at,
});

export const erasureToRow = (r: ErasureRecord): ErasureRow => ({
  id: r.id,
  tenant_id: r.tenantId,
  project_id: r.projectId,
  subject: r.subject,
  resource_id: r.resourceId,
  events_erased: r.eventsErased,
  deliveries_erased: r.deliveriesErased,
  deliveries_cancelled: r.deliveriesCancelled,
  created_at: r.createdAt,
});

export interface ProjectSettingsRow {
  tenant_id: string;
  project_id: string;
  retention_ms: number | null;
  updated_at: Date;
}

export const settingsFromRow = (r: ProjectSettingsRow): ProjectSettings => ({
  tenantId: r.tenant_id,
  projectId: r.project_id,
  retentionMs: r.retention_ms,
  updatedAt: r.updated_at,
});

export const settingsToRow = (s: ProjectSettings): ProjectSettingsRow => ({
  tenant_id: s.tenantId,
  project_id: s.projectId,
  retention_ms: s.retentionMs,
  updated_at: s.updatedAt,
});
