/** A project's own settings; `_id` is `<tenant_id>/<project_id>`. */
export interface ProjectSettingsDoc {
  _id: string;
  tenant_id: string;
  project_id: string;
  retention_ms: number | null;
  updated_at: Date;
}
