// Synchronous, so an id is derived where no port reaches (the engine's pure decisions); ADR 14 says why
// @noble/hashes (audited, pure) rather than a port over node:crypto.
import { sha256 } from "@noble/hashes/sha2.js";
import { toHex } from "./encoding.ts";

const utf8 = new TextEncoder();

/**
 * A UUID (version 8, RFC 9562) derived from a name, so the same step repeated after a crash
 * produces the same record id and the store's primary key turns the repeat into a no-op.
 * The first 128 bits of SHA-256(name), with the version and variant bits set.
 */
export function uuidFromName(name: string): string {
  const b = sha256(utf8.encode(name)).subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x80;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const s = toHex(b);
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`;
}

/** Id of the first delivery of an event to an endpoint. */
export function firstDeliveryId(eventId: string, webhookId: string): string {
  return uuidFromName(`delivery/${eventId}/${webhookId}/1`);
}

/** Id of the automatic attempt that follows a failed one. */
export function nextDeliveryId(previousId: string): string {
  return uuidFromName(`delivery/next/${previousId}`);
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
