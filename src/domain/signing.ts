import { timingSafeEqual, toBase64 } from "./encoding.ts";
import {
  type HmacKey,
  type HmacSha256,
  joinSignatures,
  labelled,
  type SyncHmacSha256,
  webCryptoHmac,
} from "./hmac.ts";

export const SECRET_PREFIX = "whsec_";
export const SIGNATURE_VERSION = "v1";
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** A new endpoint secret: whsec_ and the base64 of 32 random bytes. */
export function newEndpointSecret(random32: Uint8Array): string {
  if (random32.length !== 32) throw new Error("a secret needs 32 random bytes");
  return `${SECRET_PREFIX}${toBase64(random32)}`;
}

const encoder = new TextEncoder();

// The key of a secret is the same every time; making it is cheap, but a hot endpoint signs thousands of times.
const keys = new Map<string, HmacKey>();
const KEY_CACHE_LIMIT = 10_000;

/** The herald-v1 key of a secret: the whole `whsec_…` string as UTF-8 bytes, exactly as handed out. */
export function heraldV1Key(secret: string): HmacKey {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= KEY_CACHE_LIMIT) keys.clear();
    key = { id: `herald-v1:${secret}`, bytes: encoder.encode(secret) };
    keys.set(secret, key);
  }
  return key;
}

/**
 * The herald-v1 X-Webhook-Signature value: `v1=` and the lowercase hex HMAC-SHA256 of
 * "<timestamp>.<body>" per secret, newest first, separated by a space (two during a rotation grace
 * period). At once with a synchronous HMAC (node:crypto), else a promise (Web Crypto).
 */
export function heraldV1Signature(
  secrets: readonly string[],
  timestamp: number | string,
  body: string | Uint8Array,
  hmac: SyncHmacSha256,
): string;
export function heraldV1Signature(
  secrets: readonly string[],
  timestamp: number | string,
  body: string | Uint8Array,
  hmac?: HmacSha256,
): string | Promise<string>;
export function heraldV1Signature(
  secrets: readonly string[],
  timestamp: number | string,
  body: string | Uint8Array,
  hmac: HmacSha256 = webCryptoHmac,
): string | Promise<string> {
  return joinSignatures(
    secrets.map((s) => labelled(`${SIGNATURE_VERSION}=`, hmac(heraldV1Key(s), `${timestamp}.`, body, "hex"))),
  );
}

/** v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<body>", keyed by the whole secret string. */
export async function sign(
  secret: string,
  timestamp: number | string,
  body: string | Uint8Array,
): Promise<string> {
  return heraldV1Signature([secret], timestamp, body);
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
  return heraldV1Signature(secrets, timestamp, body);
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
