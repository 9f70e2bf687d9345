import type { BrokerDeliveryRequest } from "../../app/ports/sending.ts";
import type { SendOutcome } from "../../domain/delivery.ts";
import type { HmacSha256 } from "../../domain/hmac.ts";
import { type HeaderPairs, signedHeaders } from "../../domain/signature-scheme.ts";
import type { Ed25519Sign } from "../../domain/standard-webhooks-ed25519.ts";

/**
 * The headers a broker message carries (ADR 27): the scheme's id, timestamp and signature, the attempt's
 * `traceparent` when tracing is on, then the endpoint's custom headers, as an HTTPS delivery sends them
 * (outcome.ts `deliveryHeaderFields`) less Content-Type and User-Agent, which are HTTP's. A consumer
 * rebuilds the header map from them and verifies with the same libraries as an HTTPS receiver.
 */
export async function brokerMessageHeaders(
  req: BrokerDeliveryRequest,
  hmac?: HmacSha256,
  ed25519?: Ed25519Sign,
): Promise<HeaderPairs> {
  const pairs = await signedHeaders(req, hmac, ed25519);
  if (req.traceparent !== undefined) pairs.push(["traceparent", req.traceparent]);
  for (const [name, value] of req.headers) pairs.push([name, value]);
  return pairs;
}

/**
 * A broker's error text with every credential cut out (ADR 27: recorded only so): AMQP and SQS name the
 * user or key id, never the secret, but a text that quoted it must not reach a record or a log.
 */
export function withoutSecrets(text: string, secrets: readonly (string | null | undefined)[]): string {
  let clean = text;
  for (const s of secrets) if (s) clean = clean.split(s).join("********");
  return clean;
}

/** The outcome of a send the broker acknowledged: no HTTP status or body, the broker's receipt. */
export function stored(durationMs: number, receipt: Record<string, string | number>): SendOutcome {
  return {
    ok: true,
    responseStatus: null,
    responseBody: null,
    error: null,
    durationMs,
    retryAfterMs: null,
    receipt,
  };
}
