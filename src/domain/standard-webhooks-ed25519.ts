import { fromBase64, toBase64 } from "./encoding.ts";
import { joinSignatures, labelled } from "./hmac.ts";

/** The Standard Webhooks signature identifier of an asymmetric (Ed25519) signature. */
export const STANDARD_WEBHOOKS_ASYMMETRIC_VERSION = "v1a";
/** The specification's prefix of a serialised public key: `whpk_` + base64 of the 32-byte raw key. */
export const PUBLIC_KEY_PREFIX = "whpk_";
/**
 * How Herald writes an endpoint's Ed25519 private key inside its sealed secret: `whsk_ed25519_` +
 * base64 of the PKCS #8 key. Never shown to anyone; the prefix tells it apart from a `whsec_` secret.
 */
export const ED25519_SECRET_PREFIX = "whsk_ed25519_";

// An Ed25519 PKCS #8 PrivateKeyInfo (RFC 8410) is this fixed DER head followed by the 32-byte seed.
const PKCS8_HEAD = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);
const SEED_LENGTH = 32;

/** A new Ed25519 signing key, serialised as Herald seals it, from 32 random bytes (the seed). */
export function newEd25519Secret(random32: Uint8Array): string {
  if (random32.length !== SEED_LENGTH) throw new Error("an Ed25519 key needs 32 random bytes");
  const der = new Uint8Array(PKCS8_HEAD.length + SEED_LENGTH);
  der.set(PKCS8_HEAD, 0);
  der.set(random32, PKCS8_HEAD.length);
  return `${ED25519_SECRET_PREFIX}${toBase64(der)}`;
}

/** True for a plain secret holding an Ed25519 private key, false for an HMAC (`whsec_`) secret. */
export function isEd25519Secret(plain: string): boolean {
  return plain.startsWith(ED25519_SECRET_PREFIX);
}

/** The PKCS #8 bytes of an Ed25519 secret. */
export function ed25519Pkcs8(secret: string): Uint8Array {
  if (!isEd25519Secret(secret)) throw new Error("not an Ed25519 secret");
  const der = fromBase64(secret.slice(ED25519_SECRET_PREFIX.length));
  if (der.length !== PKCS8_HEAD.length + SEED_LENGTH || PKCS8_HEAD.some((b, i) => der[i] !== b)) {
    throw new Error("an Ed25519 secret must hold a PKCS #8 Ed25519 key");
  }
  return der;
}

// Importing costs more than signing; an endpoint signs thousands of times with one key.
const privateKeys = new Map<string, Promise<CryptoKey>>();
const publicKeys = new Map<string, Promise<string>>();
const KEY_CACHE_LIMIT = 10_000;

function importPrivate(secret: string, extractable: boolean): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "pkcs8",
    new Uint8Array(ed25519Pkcs8(secret)),
    { name: "Ed25519" },
    extractable,
    ["sign"],
  );
}

function signingKey(secret: string): Promise<CryptoKey> {
  let key = privateKeys.get(secret);
  if (!key) {
    if (privateKeys.size >= KEY_CACHE_LIMIT) privateKeys.clear();
    key = importPrivate(secret, false);
    privateKeys.set(secret, key);
  }
  return key;
}

/**
 * The public key of an Ed25519 secret as the specification serialises it: `whpk_` + base64 of the 32
 * raw bytes. Derived, not stored: a private key's JWK carries its public half (`x`, base64url), so
 * nothing beyond the sealed secret is kept.
 */
export function ed25519PublicKey(secret: string): Promise<string> {
  let key = publicKeys.get(secret);
  if (!key) {
    if (publicKeys.size >= KEY_CACHE_LIMIT) publicKeys.clear();
    key = importPrivate(secret, true)
      .then((k) => crypto.subtle.exportKey("jwk", k))
      .then((jwk) => {
        if (typeof jwk.x !== "string") throw new Error("the Ed25519 key has no public half");
        return `${PUBLIC_KEY_PREFIX}${toBase64(fromBase64(jwk.x))}`;
      });
    // A failed derivation is not kept: the next call tries again.
    key.catch(() => publicKeys.delete(secret));
    publicKeys.set(secret, key);
  }
  return key;
}

/**
 * Ed25519 of `prefix` followed by `body`, as base64 of the 64-byte signature, as a runtime computes it.
 * Web Crypto (every runtime) answers a promise; node:crypto, the Node sender's fast path, at once.
 * Ed25519 is deterministic, so both give the same bytes (a test holds them equal).
 */
export type Ed25519Sign = (
  secret: string,
  prefix: string,
  body: string | Uint8Array,
) => string | Promise<string>;
/** An Ed25519 signer that answers at once. */
export type SyncEd25519Sign = (secret: string, prefix: string, body: string | Uint8Array) => string;

const encoder = new TextEncoder();

/** Ed25519 on Web Crypto: the portable implementation, used wherever no faster one is given. */
export const webCryptoEd25519: Ed25519Sign = async (secret, prefix, body) => {
  const head = encoder.encode(prefix);
  const raw = typeof body === "string" ? encoder.encode(body) : body;
  const message = new Uint8Array(head.length + raw.length);
  message.set(head, 0);
  message.set(raw, head.length);
  return toBase64(
    new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, await signingKey(secret), message)),
  );
};

/**
 * The Standard Webhooks `webhook-signature` value of an Ed25519 endpoint: `v1a,` and the base64
 * Ed25519 signature of "<id>.<timestamp>.<body>" per key, newest first, separated by a space (two
 * during a rotation grace period).
 */
export function standardWebhooksEd25519Signature(
  secrets: readonly string[],
  id: string,
  timestamp: number | string,
  body: string | Uint8Array,
  sign: SyncEd25519Sign,
): string;
export function standardWebhooksEd25519Signature(
  secrets: readonly string[],
  id: string,
  timestamp: number | string,
  body: string | Uint8Array,
  sign?: Ed25519Sign,
): string | Promise<string>;
export function standardWebhooksEd25519Signature(
  secrets: readonly string[],
  id: string,
  timestamp: number | string,
  body: string | Uint8Array,
  sign: Ed25519Sign = webCryptoEd25519,
): string | Promise<string> {
  const prefix = `${id}.${timestamp}.`;
  return joinSignatures(
    secrets.map((s) => labelled(`${STANDARD_WEBHOOKS_ASYMMETRIC_VERSION},`, sign(s, prefix, body))),
  );
}
