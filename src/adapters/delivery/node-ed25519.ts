import { createPrivateKey, type KeyObject, sign } from "node:crypto";
import { ed25519Pkcs8, type SyncEd25519Sign } from "../../domain/standard-webhooks-ed25519.ts";

// Parsing the PKCS #8 key costs more than signing; an endpoint signs thousands of times with one key.
const keys = new Map<string, KeyObject>();
const KEY_CACHE_LIMIT = 10_000;

/**
 * Ed25519 on node:crypto, answering at once: the same bytes as the domain's Web Crypto one (Ed25519 is
 * deterministic; a test holds them equal), and no asynchronous job on the undici sender's hot path.
 */
export const nodeEd25519: SyncEd25519Sign = (secret, prefix, body) => {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= KEY_CACHE_LIMIT) keys.clear();
    key = createPrivateKey({ key: Buffer.from(ed25519Pkcs8(secret)), format: "der", type: "pkcs8" });
    keys.set(secret, key);
  }
  const message = Buffer.concat([Buffer.from(prefix), typeof body === "string" ? Buffer.from(body) : body]);
  return sign(null, message, key).toString("base64");
};
