import type { HandedWork } from "../../app/ports/store.ts";
import type { Delivery } from "../../domain/delivery.ts";
import { isEventType } from "../../domain/event-catalog.ts";
import { isFirstAttemptOf } from "./rows/deliveries.ts";

/** What an endpoint id can be (a UUID, or a test's name); anything else in a payload is left out. */
const ENDPOINT_ID = /^[A-Za-z0-9_.:-]{1,100}$/;

/** The endpoint ids of an announcement of endpoints only (ids joined by commas); what cannot be one is left out. */
export function parseEndpointIds(payload: string): string[] {
  return payload.split(",").filter((part) => ENDPOINT_ID.test(part));
}

/**
 * A hand-over as one NOTIFY payload: the event and, of each first delivery, the four fields of its own
 * (id, endpoint, URL, status); everything else is its event's (`isFirstAttemptOf`). A JSON object, so a
 * process that knows only endpoint lists finds no endpoint id in it and reads as it did. Null when the
 * work is not a publish's first attempts, or does not fit in `max` characters: its endpoints are then
 * announced alone.
 */
export function encodeHandedWork(work: HandedWork, max: number): string | null {
  const e = work.event;
  if (work.deliveries.length === 0 || !work.deliveries.every((d) => isFirstAttemptOf(d, e))) return null;
  const payload = JSON.stringify({
    e: [
      e.id,
      e.tenantId,
      e.projectId,
      e.type,
      e.body,
      e.occurredAt.getTime(),
      e.createdAt.getTime(),
      e.targets,
      e.resourceId,
      e.recipientKey,
      e.sequence,
      e.traceparent ?? null,
    ],
    d: work.deliveries.map((d) => [d.id, d.webhookId, d.url, d.status]),
  });
  return payload.length <= max ? payload : null;
}

const str = (x: unknown): x is string => typeof x === "string";
const strOrNull = (x: unknown): x is string | null => x === null || typeof x === "string";
const int = (x: unknown): x is number => typeof x === "number" && Number.isSafeInteger(x);

/**
 * The work a payload carries, or null when it carries none (an endpoint list) or is not one this version
 * writes: every field is checked, so a payload from another version or from anyone else with access to
 * the channel is never taken for work.
 */
export function decodeHandedWork(payload: string): HandedWork | null {
  if (!payload.startsWith("{")) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(payload);
  } catch {
    return null;
  }
  const { e, d } = (raw ?? {}) as { e?: unknown; d?: unknown };
  if (!Array.isArray(e) || e.length !== 12 || !Array.isArray(d) || d.length === 0) return null;
  const [
    id,
    tenantId,
    projectId,
    type,
    body,
    occurredAt,
    createdAt,
    targets,
    resourceId,
    recipientKey,
    sequence,
    traceparent,
  ] = e;
  if (
    !str(id) ||
    !str(tenantId) ||
    !str(projectId) ||
    !str(type) ||
    !isEventType(type) ||
    !str(body) ||
    !int(occurredAt) ||
    !int(createdAt) ||
    !Array.isArray(targets) ||
    !targets.every((t) => str(t) && ENDPOINT_ID.test(t)) ||
    !strOrNull(resourceId) ||
    !strOrNull(recipientKey) ||
    !int(sequence) ||
    !strOrNull(traceparent)
  )
    return null;
  const at = new Date(createdAt);
  const deliveries: Delivery[] = [];
  for (const row of d) {
    if (!Array.isArray(row) || row.length !== 4) return null;
    const [deliveryId, webhookId, url, status] = row;
    if (
      !str(deliveryId) ||
      !str(webhookId) ||
      !ENDPOINT_ID.test(webhookId) ||
      !str(url) ||
      status !== "pending"
    )
      return null;
    deliveries.push({
      id: deliveryId,
      tenantId,
      projectId,
      webhookId,
      eventId: id,
      eventType: type,
      attempt: 1,
      trigger: "automatic",
      status: "pending",
      url,
      responseStatus: null,
      responseBody: null,
      error: null,
      durationMs: null,
      scheduledAt: at,
      attemptedAt: null,
      nextAttemptAt: null,
      createdAt: at,
      erasedAt: null,
      sequence,
      signatureScheme: null,
      headerNames: null,
    });
  }
  return {
    event: {
      id,
      tenantId,
      projectId,
      type,
      body,
      occurredAt: new Date(occurredAt),
      createdAt: at,
      targets,
      fanoutPending: false,
      resourceId,
      recipientKey,
      sequence,
      traceparent,
    },
    deliveries,
  };
}
