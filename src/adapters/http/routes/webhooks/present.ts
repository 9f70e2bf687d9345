import { maskedHeaders } from "../../../../domain/custom-headers.ts";
import type { Endpoint } from "../../../../domain/endpoint.ts";
import type { RateLimit } from "../../../../domain/rate-limit.ts";
import { isoMillis, isoSeconds } from "../../../../domain/time.ts";
import type { WebhookJson } from "./schema.ts";

/**
 * The public JSON of an endpoint: never its secrets, never its custom header values (masked).
 * `held`: what its ordering holds back.
 */
export function presentWebhook(e: Endpoint, held = 0): WebhookJson {
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    enabled: e.enabled,
    description: e.description,
    created_at: isoSeconds(e.createdAt),
    updated_at: isoMillis(e.updatedAt),
    disabled_reason: e.disabledReason,
    signature_scheme: e.signatureScheme,
    headers: maskedHeaders(e.headers),
    filter: e.filter,
    rate_limit: rateLimitJson(e.rateLimit),
    ordering: e.ordering,
    held,
  };
}

/** `{per_second: n}` or `{per_minute: n}`; null for none. */
export function rateLimitJson(l: RateLimit | null): WebhookJson["rate_limit"] {
  return l === null ? null : l.per === "second" ? { per_second: l.count } : { per_minute: l.count };
}

/** The domain's limit from the API's JSON (validated: exactly one field). */
export function rateLimitOf(json: WebhookJson["rate_limit"] | undefined): RateLimit | null | undefined {
  if (json === undefined || json === null) return json;
  return json.per_second !== undefined
    ? { count: json.per_second, per: "second" }
    : { count: json.per_minute!, per: "minute" };
}
