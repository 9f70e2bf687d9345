import { maskedHeaders } from "../../../../domain/custom-headers.ts";
import type { Endpoint } from "../../../../domain/endpoint.ts";
import { isoMillis, isoSeconds } from "../../../../domain/time.ts";
import type { WebhookJson } from "./schema.ts";

/** The public JSON of an endpoint: never its secrets, never its custom header values (masked). */
export function presentWebhook(e: Endpoint): WebhookJson {
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
  };
}
