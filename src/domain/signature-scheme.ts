import type { HmacSha256, SyncHmacSha256 } from "./hmac.ts";
import { heraldV1Signature } from "./signing.ts";
import { standardWebhooksSignature } from "./standard-webhooks.ts";

/**
 * How an endpoint's deliveries are signed: `herald-v1` (the seed's X-Webhook-* headers, hex HMAC of
 * "<timestamp>.<body>" keyed by the whole secret string) or `standard-webhooks` (webhook-id,
 * webhook-timestamp, webhook-signature as the Standard Webhooks specification defines them).
 */
export const SIGNATURE_SCHEMES = ["herald-v1", "standard-webhooks"] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];
export const DEFAULT_SIGNATURE_SCHEME: SignatureScheme = "herald-v1";

/** What a delivery's signature covers. */
export interface SigningInput {
  scheme: SignatureScheme;
  /** The event id (X-Webhook-Id or webhook-id). */
  eventId: string;
  /** Unix seconds of the attempt. */
  timestamp: number;
  /** The body exactly as sent. */
  body: string | Uint8Array;
  /** Plain secrets, newest first: one signature each. */
  secrets: readonly string[];
}

/** Header name and value pairs, in the order they are sent. */
export type HeaderPairs = [string, string][];

/** The header names a scheme sends, in send order: id, timestamp, signature. */
export const SCHEME_HEADERS: Record<SignatureScheme, readonly [string, string, string]> = {
  "herald-v1": ["X-Webhook-Id", "X-Webhook-Timestamp", "X-Webhook-Signature"],
  "standard-webhooks": ["webhook-id", "webhook-timestamp", "webhook-signature"],
};

/**
 * The headers that identify and authenticate a delivery under its endpoint's scheme. The one place
 * both senders and the console's "request as sent" get them from; at once with a synchronous HMAC.
 */
export function signedHeaders(input: SigningInput, hmac: SyncHmacSha256): HeaderPairs;
export function signedHeaders(input: SigningInput, hmac?: HmacSha256): HeaderPairs | Promise<HeaderPairs>;
export function signedHeaders(input: SigningInput, hmac?: HmacSha256): HeaderPairs | Promise<HeaderPairs> {
  const [idName, timestampName, signatureName] = SCHEME_HEADERS[input.scheme];
  const signature =
    input.scheme === "standard-webhooks"
      ? standardWebhooksSignature(input.secrets, input.eventId, input.timestamp, input.body, hmac)
      : heraldV1Signature(input.secrets, input.timestamp, input.body, hmac);
  const pairs = (value: string): HeaderPairs => [
    [idName, input.eventId],
    [timestampName, String(input.timestamp)],
    [signatureName, value],
  ];
  return typeof signature === "string" ? pairs(signature) : signature.then(pairs);
}
