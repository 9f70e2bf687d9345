import { fromBase64 } from "./encoding.ts";
import {
  type HmacKey,
  type HmacSha256,
  joinSignatures,
  labelled,
  type SyncHmacSha256,
  webCryptoHmac,
} from "./hmac.ts";
import { SECRET_PREFIX } from "./signing.ts";

/** The Standard Webhooks signature identifier of a symmetric (HMAC-SHA256) signature. */
export const STANDARD_WEBHOOKS_VERSION = "v1";

const keys = new Map<string, HmacKey>();
const KEY_CACHE_LIMIT = 10_000;

/**
 * The Standard Webhooks key of a Herald secret: the base64-decoded part after `whsec_`, which for a
 * Herald secret is its 32 random bytes. This is how the specification's own libraries read a
 * `whsec_` secret, so the secret handed out works with them unchanged.
 */
export function standardWebhooksKey(secret: string): HmacKey {
  let key = keys.get(secret);
  if (!key) {
    const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
    let bytes: Uint8Array;
    try {
      bytes = fromBase64(encoded);
    } catch {
      throw new Error("a Standard Webhooks secret must be whsec_ and base64");
    }
    if (bytes.length === 0) throw new Error("a Standard Webhooks secret must not be empty");
    if (keys.size >= KEY_CACHE_LIMIT) keys.clear();
    key = { id: `standard-webhooks:${secret}`, bytes };
    keys.set(secret, key);
  }
  return key;
}

/**
 * The Standard Webhooks `webhook-signature` value: `v1,` and the base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>" per secret, newest first, separated by a space (two during a rotation
 * grace period). At once with a synchronous HMAC (node:crypto), else a promise (Web Crypto).
 */
export function standardWebhooksSignature(
  secrets: readonly string[],
  id: string,
  timestamp: number | string,
  body: string | Uint8Array,
  hmac: SyncHmacSha256,
): string;
export function standardWebhooksSignature(
  secrets: readonly string[],
  id: string,
  timestamp: number | string,
  body: string | Uint8Array,
  hmac?: HmacSha256,
): string | Promise<string>;
export function standardWebhooksSignature(
  secrets: readonly string[],
  id: string,
  timestamp: number | string,
  body: string | Uint8Array,
  hmac: HmacSha256 = webCryptoHmac,
): string | Promise<string> {
  const prefix = `${id}.${timestamp}.`;
  return joinSignatures(
    secrets.map((s) =>
      labelled(`${STANDARD_WEBHOOKS_VERSION},`, hmac(standardWebhooksKey(s), prefix, body, "base64")),
    ),
  );
}
