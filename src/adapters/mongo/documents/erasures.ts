/** One erasure (ADR 15): what it was about and how much it removed. */
export interface ErasureDoc {
  _id: string;
  tenant_id: string;
  project_id: string;
  subject: "resource_id" | "recipient";
  resource_id: string | null;
  events_erased: number;
  deliveries_erased: number;
  deliveries_cancelled: number;
  created_at: Date;
}
