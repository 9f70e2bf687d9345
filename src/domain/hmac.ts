import { toBase64, toHex } from "./encoding.ts";

/** An HMAC key: its bytes, and the name its imported form is cached under (kept in memory only). */
export interface HmacKey {
  id: string;
  bytes: Uint8Array;
}

export type MacEncoding = "hex" | "base64";

/**
 * HMAC-SHA256 of `prefix` followed by `body`, encoded, as a runtime computes it. Web Crypto (every
 * runtime) answers a promise; node:crypto, the Node sender's fast path, answers at once. Each
 * signature scheme is written once against this, so both give the same bytes (a test holds them equal).
 */
export type HmacSha256 = (
  key: HmacKey,
  prefix: string,
  body: string | Uint8Array,
  encoding: MacEncoding,
) => string | Promise<string>;

/** An HMAC-SHA256 that answers at once. */
export type SyncHmacSha256 = (
  key: HmacKey,
  prefix: string,
  body: string | Uint8Array,
  encoding: MacEncoding,
) => string;

const encoder = new TextEncoder();

// Importing a key costs more than the HMAC itself; an endpoint signs thousands of times with one secret.
const imported = new Map<string, Promise<CryptoKey>>();
const KEY_CACHE_LIMIT = 10_000;

function cryptoKey(key: HmacKey): Promise<CryptoKey> {
  let k = imported.get(key.id);
  if (!k) {
    if (imported.size >= KEY_CACHE_LIMIT) imported.clear();
    k = crypto.subtle.importKey("raw", new Uint8Array(key.bytes), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    imported.set(key.id, k);
  }
  return k;
}

/** HMAC-SHA256 on Web Crypto: the portable implementation, used wherever no faster one is given. */
export const webCryptoHmac: HmacSha256 = async (key, prefix, body, encoding) => {
  const head = encoder.encode(prefix);
  const raw = typeof body === "string" ? encoder.encode(body) : body;
  const message = new Uint8Array(head.length + raw.length);
  message.set(head, 0);
  message.set(raw, head.length);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await cryptoKey(key), message));
  return encoding === "hex" ? toHex(mac) : toBase64(mac);
};

/** Joins one signature per secret with spaces, at once when every part is ready, else as a promise. */
export function joinSignatures(parts: readonly (string | Promise<string>)[]): string | Promise<string> {
  if (parts.every((p): p is string => typeof p === "string")) return parts.join(" ");
  return Promise.all(parts).then((all) => all.join(" "));
}

/** `label` in front of a MAC that may still be coming. */
export function labelled(label: string, mac: string | Promise<string>): string | Promise<string> {
  return typeof mac === "string" ? label + mac : mac.then((m) => label + m);
}
