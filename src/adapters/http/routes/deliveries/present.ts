import type { Delivery } from "../../../../domain/delivery.ts";
import { isoMillis } from "../../../../domain/time.ts";
import type { DeliveryJson } from "./schema.ts";

const iso = (d: Date | null) => (d ? isoMillis(d) : null);

/** The public JSON of a delivery record (CONTRACT §4 fields, snake_case). */
export function presentDelivery(d: Delivery): DeliveryJson {
  return {
    id: d.id,
    webhook_id: d.webhookId,
    event_id: d.eventId,
    event_type: d.eventType,
    attempt: d.attempt,
    trigger: d.trigger,
    status: d.status,
    url: d.url,
    response_status: d.responseStatus,
    response_body: d.responseBody,
    error: d.error,
    receipt: d.receipt ?? null,
    duration_ms: d.durationMs,
    scheduled_at: isoMillis(d.scheduledAt),
    attempted_at: iso(d.attemptedAt),
    next_attempt_at: iso(d.nextAttemptAt),
    created_at: isoMillis(d.createdAt),
    erased_at: iso(d.erasedAt),
  };
}
