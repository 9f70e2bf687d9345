import type { EndpointUseCases } from "../../../../app/endpoints.ts";
import type { ClientCertificateInput } from "../../../../domain/client-certificate.ts";
import { maskedHeaders } from "../../../../domain/custom-headers.ts";
import type { Endpoint } from "../../../../domain/endpoint.ts";
import type { RateLimit } from "../../../../domain/rate-limit.ts";
import { isoMillis, isoSeconds } from "../../../../domain/time.ts";
import { destinationJson } from "./destination-json.ts";
import type { WebhookJson } from "./schema.ts";

/**
 * The public JSON of an endpoint: never its secrets or private key, never its custom header values
 * (masked), never a client certificate's key (its public facts only), never a destination's credentials (masked). `held`: what its ordering holds back; `publicKey`: an Ed25519 endpoint's `whpk_…` key.
 */
export function presentWebhook(e: Endpoint, held = 0, publicKey: string | null = null): WebhookJson {
  return {
    // The kind first, then its object (credentials masked), as the document's variants list them.
    ...destinationJson(e.destination),
    id: e.id,
    url: e.url,
    events: e.events,
    enabled: e.enabled,
    description: e.description,
    created_at: isoSeconds(e.createdAt),
    updated_at: isoMillis(e.updatedAt),
    disabled_reason: e.disabledReason,
    signature_scheme: e.signatureScheme,
    public_key: publicKey,
    headers: maskedHeaders(e.headers),
    filter: e.filter,
    rate_limit: rateLimitJson(e.rateLimit),
    ordering: e.ordering,
    client_certificate: e.clientCertificate && {
      subject: e.clientCertificate.subject,
      issuer: e.clientCertificate.issuer,
      not_before: isoMillis(e.clientCertificate.notBefore),
      not_after: isoMillis(e.clientCertificate.notAfter),
      fingerprint_sha256: e.clientCertificate.fingerprint,
    },
    held,
  };
}

/** The public JSON of endpoints, with what their ordering holds back and their public keys. */
export async function presentWebhooks(
  endpoints: EndpointUseCases,
  list: readonly Endpoint[],
): Promise<WebhookJson[]> {
  const [held, keys] = await Promise.all([endpoints.held(list), endpoints.publicKeys(list)]);
  return list.map((e) => presentWebhook(e, held.get(e.id), keys.get(e.id) ?? null));
}

/** The public JSON of one endpoint (see presentWebhooks). */
export async function presentOneWebhook(endpoints: EndpointUseCases, e: Endpoint): Promise<WebhookJson> {
  const [json] = await presentWebhooks(endpoints, [e]);
  return json!;
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

/** The use case's client certificate input from the API's JSON; null removes, undefined keeps. */
export function clientCertificateOf(
  json: { certificate: string; private_key: string; passphrase?: string | undefined } | null | undefined,
): ClientCertificateInput | null | undefined {
  if (json === undefined || json === null) return json;
  return { certificate: json.certificate, privateKey: json.private_key, passphrase: json.passphrase };
}
