import type { LookupFunction } from "node:net";
import { Agent } from "undici";
import type { SendOutcome } from "../../domain/delivery.ts";
import { isBlockedAddress, isIpLiteral } from "./address-policy.ts";
import { createGuardedLookup, type Resolve, systemResolve } from "./guarded-lookup.ts";
import { nodeSignatureHeader } from "./node-signer.ts";
import {
  deliveryHeaders,
  deliveryUrl,
  elapsed,
  failureOutcome,
  responseOutcome,
  underDeadline,
} from "./outcome.ts";
import type { DeliveryRequest, Sender } from "./sender.ts";

export interface UndiciSenderOptions {
  /** Whole-request limit: connect, TLS, headers and reading the kept part of the body. */
  timeoutMs: number;
  /** true lets deliveries reach loopback, private, link-local and other non-public addresses. */
  allowPrivateNetworks: boolean;
  /** The whole User-Agent value, `Herald/<version>`. */
  userAgent: string;
  /** Pooled keep-alive connections per origin; unlimited when absent (concurrency is capped upstream). */
  maxConnectionsPerOrigin?: number;
  /** Host name resolution; defaults to the system resolver. Tests inject one to avoid real DNS. */
  lookup?: Resolve;
  /** PEM CA certificate(s) to trust INSTEAD of the runtime's store (private CAs, tests). */
  ca?: string;
  /** Which addresses are refused; defaults to isBlockedAddress. Tests use it to stage DNS rebinding on loopback. */
  isBlocked?: (ip: string) => boolean;
}

/**
 * The Node sender: an undici Agent with pooled keep-alive connections whose every new connection
 * resolves through a guarded lookup, so the address the socket connects to is the one checked.
 * Redirects are never followed (no redirect interceptor). TLS trust is Node's own store, which
 * includes NODE_EXTRA_CA_CERTS, unless `ca` replaces it.
 */
export function createUndiciSender(options: UndiciSenderOptions): Sender {
  const isBlocked = options.allowPrivateNetworks ? () => false : (options.isBlocked ?? isBlockedAddress);
  const resolve = options.lookup ?? systemResolve;
  const lookup = createGuardedLookup(resolve, isBlocked) as unknown as LookupFunction;
  const agent = new Agent({
    connections: options.maxConnectionsPerOrigin ?? null,
    pipelining: 1,
    keepAliveTimeout: 4_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: {
      timeout: options.timeoutMs,
      lookup,
      ...(options.ca !== undefined ? { ca: options.ca } : {}),
    },
  });

  async function send(req: DeliveryRequest): Promise<SendOutcome> {
    const start = performance.now();
    const url = deliveryUrl(req.url);
    if (!url) return failureOutcome("connection_error", elapsed(start));
    // A literal IP is connected to without a lookup, so the guard in `lookup` never sees it.
    if (isIpLiteral(url.hostname) && isBlocked(url.hostname)) {
      return failureOutcome("blocked_address", elapsed(start));
    }

    const headers = await deliveryHeaders(req, options.userAgent, nodeSignatureHeader);
    return underDeadline(options.timeoutMs, start, async (x) => {
      const res = await agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers,
        body: req.body,
        signal: x.signal,
      });
      x.status = res.statusCode;
      for await (const chunk of res.body) {
        if (x.body.push(chunk as Uint8Array)) break;
      }
      const retryAfter = res.headers["retry-after"];
      return responseOutcome({
        status: x.status,
        retryAfter: Array.isArray(retryAfter) ? (retryAfter[0] ?? null) : (retryAfter ?? null),
        body: x.body.text(),
        durationMs: elapsed(start),
        now: new Date(),
      });
    });
  }

  return {
    send,
    async close() {
      await agent.close();
    },
  };
}
