import type { StoredEvent } from "../../../app/ports/events.ts";
import type { EventType } from "../../../domain/event-catalog.ts";

export interface EventDoc {
  _id: string;
  tenant_id: string;
  project_id: string;
  type: EventType;
  body: string;
  occurred_at: Date;
  created_at: Date;
  targets: string[];
  fanout_pending: boolean;
  // What erasure finds an event by (ADR 15). Absent on events stored before Herald kept them, until
  // the subject backfill fills them in; recipient_key is absent on events without a recipient.
  resource_id?: string | null;
  recipient_key?: string | null;
  /** Acceptance order (ADR 16); absent on events stored before it existed (then created_at in µs). */
  sequence?: number;
  /** The W3C traceparent of the publish's fan-out span (ADR 24); absent when the publish was not traced. */
  traceparent?: string;
}

export function eventToDoc(e: StoredEvent): EventDoc {
  return {
    _id: e.id,
    tenant_id: e.tenantId,
    project_id: e.projectId,
    type: e.type,
    body: e.body,
    occurred_at: e.occurredAt,
    created_at: e.createdAt,
    targets: [...e.targets],
    fanout_pending: e.fanoutPending,
    resource_id: e.resourceId,
    ...(e.recipientKey !== null && { recipient_key: e.recipientKey }),
    sequence: e.sequence,
    ...(e.traceparent != null && { traceparent: e.traceparent }),
  };
}

export function eventFromDoc(d: EventDoc): StoredEvent {
  return {
    id: d._id,
    tenantId: d.tenant_id,
    projectId: d.project_id,
    type: d.type,
    body: d.body,
    occurredAt: d.occurred_at,
    createdAt: d.created_at,
    targets: d.targets,
    fanoutPending: d.fanout_pending,
    resourceId: d.resource_id ?? null,
    recipientKey: d.recipient_key ?? null,
    sequence: d.sequence ?? d.created_at.getTime() * 1000,
    traceparent: d.traceparent ?? null,
  };
}
