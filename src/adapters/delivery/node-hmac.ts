import { createHmac } from "node:crypto";
import type { SyncHmacSha256 } from "../../domain/hmac.ts";

/**
 * HMAC-SHA256 on node:crypto, answering at once: the same bytes as the domain's Web Crypto one (a
 * test holds every scheme equal under both), about nine times cheaper per delivery on Node, where
 * Web Crypto's asynchronous jobs cost ~40 µs of main-thread time each.
 */
export const nodeHmac: SyncHmacSha256 = (key, prefix, body, encoding) =>
  createHmac("sha256", key.bytes)
    .update(prefix)
    .update(body as string | Uint8Array)
    .digest(encoding);
