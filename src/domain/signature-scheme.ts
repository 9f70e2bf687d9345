import type { HmacSha256, SyncHmacSha256 } from "./hmac.ts";
import { heraldV1Signature } from "./signing.ts";
import { standardWebhooksSignature } from "./standard-webhooks.ts";
import {
  type Ed25519Sign,
  isEd25519Secret,
  type SyncEd25519Sign,
  standardWebhooksEd25519Signature,
} from "./standard-webhooks-ed25519.ts";

/**
 * How an endpoint's deliveries are signed: `herald-v1` (the seed's X-Webhook-* headers, hex HMAC of
 * "<timestamp>.<body>" keyed by the whole secret string), `standard-webhooks` (webhook-id,
 * webhook-timestamp, webhook-signature as the Standard Webhooks specification defines them, `v1,`
 * HMAC) or `standard-webhooks-ed25519` (the same headers, `v1a,` Ed25519 signatures: receivers verify
 * with a public key).
 */
export const SIGNATURE_SCHEMES = ["herald-v1", "standard-webhooks", "standard-webhooks-ed25519"] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];
export const DEFAULT_SIGNATURE_SCHEME: SignatureScheme = "herald-v1";

/** The kind of key a scheme signs with: an HMAC secret (`whsec_`) or an Ed25519 key pair. */
export type KeyKind = "hmac" | "ed25519";

export function keyKind(scheme: SignatureScheme): KeyKind {
  return scheme === "standard-webhooks-ed25519" ? "ed25519" : "hmac";
}

/** The kind of key a plain secret holds. */
export function keyKindOf(plain: string): KeyKind {
  return isEd25519Secret(plain) ? "ed25519" : "hmac";
}

/** What a delivery's signature covers. */
export interface SigningInput {
  scheme: SignatureScheme;
  /** The event id (X-Webhook-Id or webhook-id). */
  eventId: string;
  /** Unix seconds of the attempt. */
  timestamp: number;
  /** The body exactly as sent. */
  body: string | Uint8Array;
  /**
   * Plain secrets, newest first: one signature each. Only keys of the scheme's kind sign (a PATCH of
   * the scheme replaces the keys with the right kind in the same write, so others are not expected).
   */
  secrets: readonly string[];
}

/** Header name and value pairs, in the order they are sent. */
export type HeaderPairs = [string, string][];

/** The header names a scheme sends, in send order: id, timestamp, signature. */
export const SCHEME_HEADERS: Record<SignatureScheme, readonly [string, string, string]> = {
  "herald-v1": ["X-Webhook-Id", "X-Webhook-Timestamp", "X-Webhook-Signature"],
  "standard-webhooks": ["webhook-id", "webhook-timestamp", "webhook-signature"],
  "standard-webhooks-ed25519": ["webhook-id", "webhook-timestamp", "webhook-signature"],
};

/**
 * The headers that identify and authenticate a delivery under its endpoint's scheme. The one place
 * both senders and the console's "request as sent" get them from; at once with a synchronous HMAC
 * and Ed25519 signer.
 */
export function signedHeaders(
  input: SigningInput,
  hmac: SyncHmacSha256,
  ed25519: SyncEd25519Sign,
): HeaderPairs;
export function signedHeaders(
  input: SigningInput,
  hmac?: HmacSha256,
  ed25519?: Ed25519Sign,
): HeaderPairs | Promise<HeaderPairs>;
export function signedHeaders(
  input: SigningInput,
  hmac?: HmacSha256,
  ed25519?: Ed25519Sign,
): HeaderPairs | Promise<HeaderPairs> {
  const [idName, timestampName, signatureName] = SCHEME_HEADERS[input.scheme];
  const kind = keyKind(input.scheme);
  const secrets = input.secrets.filter((s) => keyKindOf(s) === kind);
  const signature =
    input.scheme === "standard-webhooks-ed25519"
      ? standardWebhooksEd25519Signature(secrets, input.eventId, input.timestamp, input.body, ed25519)
      : input.scheme === "standard-webhooks"
        ? standardWebhooksSignature(secrets, input.eventId, input.timestamp, input.body, hmac)
        : heraldV1Signature(secrets, input.timestamp, input.body, hmac);
  const pairs = (value: string): HeaderPairs => [
    [idName, input.eventId],
    [timestampName, String(input.timestamp)],
    [signatureName, value],
  ];
  return typeof signature === "string" ? pairs(signature) : signature.then(pairs);
}
