import { timingSafeEqual, toBase64, toHex } from "./encoding.ts";

export const SECRET_PREFIX = "whsec_";
export const SIGNATURE_VERSION = "v1";
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** A new endpoint secret: whsec_ and the base64 of 32 random bytes. */
export function newEndpointSecret(random32: Uint8Array): string {
  if (random32.length !== 32) throw new Error("a secret needs 32 random bytes");
  return `${SECRET_PREFIX}${toBase64(random32)}`;
}

const encoder = new TextEncoder();

// Importing a key costs more than the HMAC itself; an endpoint signs thousands of times with one secret.
const keys = new Map<string, Promise<CryptoKey>>();
const KEY_CACHE_LIMIT = 10_000;

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= KEY_CACHE_LIMIT) keys.clear();
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    keys.set(secret, key);
  }
  return key;
}

/** v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<body>", keyed by the whole secret string. */
export async function sign(
  secret: string,
  timestamp: number | string,
  body: string | Uint8Array,
): Promise<string> {
  const key = await hmacKey(secret);
  const prefix = encoder.encode(`${timestamp}.`);
  const raw = typeof body === "string" ? encoder.encode(body) : body;
  const message = new Uint8Array(prefix.length + raw.length);
  message.set(prefix, 0);
  message.set(raw, prefix.length);
  const mac = await crypto.subtle.sign("HMAC", key, message);
  return `${SIGNATURE_VERSION}=${toHex(new Uint8Array(mac))}`;
}

/**
 * The X-Webhook-Signature value: one signature per secret, newest first, separated by a space
 * (two during a rotation grace period).
 */
export async function signatureHeader(
  secrets: readonly string[],
  timestamp: number,
  body: string | Uint8Array,
): Promise<string> {
  const parts = await Promise.all(secrets.map((s) => sign(s, timestamp, body)));
  return parts.join(" ");
}

export type VerifyFailure =
  | "missing_timestamp"
  | "stale_timestamp"
  | "malformed_header"
  | "signature_mismatch";

export type VerifyResult = { ok: true } | { ok: false; reason: VerifyFailure };

export interface VerifyInput {
  body: string | Uint8Array;
  timestamp: string | null | undefined;
  signature: string | null | undefined;
  secrets: readonly string[];
  nowSeconds: number;
  toleranceSeconds?: number;
}

/** The receiver's procedure of the specification: timestamp window, then a constant-time signature match. */
export async function verifySignature(input: VerifyInput): Promise<VerifyResult> {
  const ts = input.timestamp?.trim();
  if (!ts) return { ok: false, reason: "missing_timestamp" };
  if (!/^\d{1,12}$/.test(ts)) return { ok: false, reason: "malformed_header" };
  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(input.nowSeconds - Number(ts)) > tolerance) return { ok: false, reason: "stale_timestamp" };
  const received = (input.signature ?? "").trim().split(/\s+/).filter(Boolean);
  if (received.length === 0 || received.some((s) => !/^v1=[0-9a-f]{64}$/.test(s))) {
    return { ok: false, reason: "malformed_header" };
  }
  let matched = false;
  for (const secret of input.secrets) {
    const expected = await sign(secret, ts, input.body);
    for (const r of received) {
      // Every comparison runs, so timing does not reveal which one matched.
      if (timingSafeEqual(expected, r)) matched = true;
    }
  }
  return matched ? { ok: true } : { ok: false, reason: "signature_mismatch" };
}
