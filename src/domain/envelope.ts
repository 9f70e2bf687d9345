import { toHex } from "./encoding.ts";
import { invalid, type ValidationIssue } from "./errors.ts";
import { EVENT_DATA_SCHEMAS, type EventType, isEventType, resourceIdField } from "./event-catalog.ts";
import { isoMillis } from "./time.ts";

/** The body posted to an endpoint (specification: Event envelope). */
export interface Envelope {
  id: string;
  type: EventType;
  version: "1";
  occurred_at: string;
  tenant_id: string;
  project_id: string;
  resource_id: string;
  data: Record<string, unknown>;
}

export const ENVELOPE_VERSION = "1" as const;
export const EVENT_ID_PATTERN = /^evt_[0-9a-f]{32}$/;

/** A new event id: evt_ and 32 lowercase hex characters from 16 random bytes. */
export function newEventId(random16: Uint8Array): string {
  if (random16.length !== 16) throw new Error("an event id needs 16 random bytes");
  return `evt_${toHex(random16)}`;
}

export interface EnvelopeInput {
  id: string;
  type: string;
  data: unknown;
  tenantId: string;
  projectId: string;
  occurredAt: Date;
  resourceId?: string | undefined;
}

/**
 * Validates an event against the catalog and builds its envelope.
 * Throws a validation DomainError listing every problem.
 */
export function buildEnvelope(input: EnvelopeInput): Envelope {
  if (!isEventType(input.type)) {
    throw invalid([{ path: "type", message: `is not an event type of the catalog: "${input.type}"` }]);
  }
  const type = input.type;
  const parsed = EVENT_DATA_SCHEMAS[type].safeParse(input.data);
  if (!parsed.success) {
    // One issue per unknown field, named by its own path, so a typo is pointed at exactly.
    const issues: ValidationIssue[] = parsed.error.issues.flatMap((i) => {
      const at = ["data", ...i.path.map(String)];
      if (i.code === "unrecognized_keys")
        return i.keys.map((k) => ({ path: [...at, k].join("."), message: i.message }));
      return [{ path: at.join("."), message: i.message }];
    });
    throw invalid(issues);
  }
  const data = parsed.data;
  const subject = String(data[resourceIdField(type)]);
  if (input.resourceId !== undefined && input.resourceId !== subject) {
    throw invalid([
      { path: "resource_id", message: `must equal data.${resourceIdField(type)} (${subject}) or be omitted` },
    ]);
  }
  if (Number.isNaN(input.occurredAt.getTime())) {
    throw invalid([{ path: "occurred_at", message: "must be an ISO 8601 timestamp" }]);
  }
  return {
    id: input.id,
    type,
    version: ENVELOPE_VERSION,
    occurred_at: isoMillis(input.occurredAt),
    tenant_id: input.tenantId,
    project_id: input.projectId,
    resource_id: subject,
    data,
  };
}

/** The exact bytes (as a string) every attempt of this event sends; computed once at acceptance. */
export function serializeEnvelope(envelope: Envelope): string {
  const { id, type, version, occurred_at, tenant_id, project_id, resource_id, data } = envelope;
  return JSON.stringify({ id, type, version, occurred_at, tenant_id, project_id, resource_id, data });
}
