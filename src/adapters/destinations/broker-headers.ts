import type { DeliveryRequest } from "../../app/ports/sending.ts";
import type { HmacSha256 } from "../../domain/hmac.ts";
import { type HeaderPairs, signedHeaders } from "../../domain/signature-scheme.ts";

/** What a broker message's headers are made of: a delivery request less its HTTP-only parts. */
export type BrokerHeaderInput = Pick<
  DeliveryRequest,
  "body" | "eventId" | "secrets" | "timestamp" | "scheme" | "headers" | "traceparent"
>;

/**
 * The headers a broker message carries (ADR 27), in order: the scheme's id, timestamp and signature
 * (the ones an HTTPS endpoint gets, so a consumer verifies with the same libraries), the attempt's
 * `traceparent` when tracing is on, then the endpoint's custom headers. No Content-Type or User-Agent:
 * those describe an HTTP request, and each broker has its own place for a content type.
 */
export async function brokerHeaderPairs(req: BrokerHeaderInput, hmac?: HmacSha256): Promise<HeaderPairs> {
  const pairs = await signedHeaders(req, hmac);
  if (req.traceparent !== undefined) pairs.push(["traceparent", req.traceparent]);
  for (const [name, value] of req.headers) pairs.push([name, value]);
  return pairs;
}
