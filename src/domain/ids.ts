import { sha256Hex } from "./encoding.ts";

/**
 * A UUID (version 8, RFC 9562) derived from a name, so the same step repeated after a crash
 * produces the same record id and the store's primary key turns the repeat into a no-op.
 */
export async function uuidFromName(name: string): Promise<string> {
  const h = (await sha256Hex(name)).slice(0, 32).split("");
  h[12] = "8";
  h[16] = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  const s = h.join("");
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`;
}

/** Id of the first delivery of an event to an endpoint. */
export function firstDeliveryId(eventId: string, webhookId: string): Promise<string> {
  return uuidFromName(`delivery/${eventId}/${webhookId}/1`);
}

/** Id of the automatic attempt that follows a failed one. */
export function nextDeliveryId(previousId: string): Promise<string> {
  return uuidFromName(`delivery/next/${previousId}`);
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
