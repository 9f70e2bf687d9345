// Operational events (ADR 20): what Herald tells a project about its own endpoints and deliveries. Each
// notice is built from one occurrence (a disable, a failure streak, the end of a reported streak, a given-up
// event), and its key is derived from that occurrence alone, so every process, and every retry after a
// crash, that publishes it publishes one event.
import type { Delivery, SendError } from "./delivery.ts";
import type { Endpoint } from "./endpoint.ts";
import { isOperationalType, type OperationalEventType } from "./event-catalog.ts";
import { isoMillis } from "./time.ts";

/** One operational event to publish into the project of the endpoint it is about. */
export interface OperationalNotice {
  type: OperationalEventType;
  tenantId: string;
  projectId: string;
  /** The endpoint it is about: never one of its targets (ADR 20, loops). */
  endpointId: string;
  data: Record<string, unknown>;
  /**
   * The publish's Idempotency-Key, derived from the occurrence. It starts with a character outside
   * printable ASCII, which no key a publisher sends can hold, so the two never meet.
   */
  key: string;
}

/** The prefix of every operational notice's key (see OperationalNotice.key). */
export const NOTICE_KEY_PREFIX = "§herald/";

const noticeKey = (type: OperationalEventType, ...parts: string[]) =>
  `${NOTICE_KEY_PREFIX}${type}/${parts.join("/")}`;

/**
 * True when the endpoint takes only operational events: an operations endpoint. Its failure streaks are
 * made by operational deliveries alone, so they produce no endpoint.failing or endpoint.recovered (ADR 20).
 */
export function isOperationsEndpoint(e: Pick<Endpoint, "events">): boolean {
  return e.events.length > 0 && e.events.every(isOperationalType);
}

function about(e: Endpoint) {
  return {
    endpoint_id: e.id,
    url: e.url,
    ...(e.description === null ? {} : { description: e.description }),
  };
}

function notice(type: OperationalEventType, e: Endpoint, data: Record<string, unknown>, key: string) {
  return { type, tenantId: e.tenantId, projectId: e.projectId, endpointId: e.id, data, key };
}

/** endpoint.disabled, owed by an endpoint disabled (with a known time) whose notice is not published yet. */
export function disabledNotice(e: Endpoint): OperationalNotice | null {
  if (e.enabled || e.disabledAt === null || e.disabledNotice !== null || e.disabledReason === null)
    return null;
  return notice(
    "endpoint.disabled",
    e,
    {
      ...about(e),
      disabled_reason: e.disabledReason,
      disabled_at: isoMillis(e.disabledAt),
      ...(e.failingSince === null ? {} : { failing_since: isoMillis(e.failingSince) }),
    },
    noticeKey("endpoint.disabled", e.id, String(e.disabledAt.getTime())),
  );
}

/** The key of the endpoint.failing of the streak that began at `failingSince`. */
export const failingKey = (endpointId: string, failingSince: Date) =>
  noticeKey("endpoint.failing", endpointId, String(failingSince.getTime()));

/**
 * endpoint.failing, owed by an enabled endpoint whose unreported failure streak began at least
 * `failingAfterMs` before `now`; none about an operations endpoint.
 */
export function failingNotice(e: Endpoint, now: Date, failingAfterMs: number): OperationalNotice | null {
  if (!e.enabled || e.failingSince === null || e.failingNotice !== null || isOperationsEndpoint(e))
    return null;
  if (now.getTime() - e.failingSince.getTime() < failingAfterMs) return null;
  return notice(
    "endpoint.failing",
    e,
    { ...about(e), failing_since: isoMillis(e.failingSince) },
    failingKey(e.id, e.failingSince),
  );
}

/**
 * endpoint.recovered, owed when a success ends a streak that endpoint.failing reported (read just before
 * the streak is cleared); none for a streak never reported, or about an operations endpoint.
 */
export function recoveredNotice(e: Endpoint): OperationalNotice | null {
  if (e.failingSince === null || e.failingNotice === null || isOperationsEndpoint(e)) return null;
  if (e.failingNotice.getTime() !== e.failingSince.getTime()) return null;
  return notice(
    "endpoint.recovered",
    e,
    { ...about(e), failing_since: isoMillis(e.failingSince) },
    noticeKey("endpoint.recovered", e.id, String(e.failingSince.getTime())),
  );
}

/** What is known of an attempt that ended its event's automatic attempts to an endpoint. */
export interface ExhaustedAttempt {
  delivery: Pick<Delivery, "id" | "eventId" | "eventType" | "attempt" | "trigger">;
  attemptedAt: Date;
  responseStatus: number | null;
  error: SendError | null;
}

/**
 * delivery.exhausted, owed when the last automatic attempt of an event to an endpoint failed; never for
 * the delivery of an operational event (a failing operations endpoint makes no stream about itself).
 */
export function exhaustedNotice(e: Endpoint, a: ExhaustedAttempt): OperationalNotice | null {
  if (a.delivery.trigger !== "automatic" || isOperationalType(a.delivery.eventType)) return null;
  return notice(
    "delivery.exhausted",
    e,
    {
      ...about(e),
      event_id: a.delivery.eventId,
      event_type: a.delivery.eventType,
      delivery_id: a.delivery.id,
      attempt: a.delivery.attempt,
      attempted_at: isoMillis(a.attemptedAt),
      ...(a.responseStatus === null ? {} : { response_status: a.responseStatus }),
      ...(a.error === null ? {} : { error: a.error }),
    },
    noticeKey("delivery.exhausted", a.delivery.id),
  );
}
