import type { DeliveryRequest, Sender } from "../../app/ports/sending.ts";
import type { SendOutcome } from "../../domain/delivery.ts";
import { isBlockedAddress, isIpLiteral } from "./address-policy.ts";
import { DeadlineQueue } from "./deadlines.ts";
import { fetchClientCertificates, type Presented } from "./fetch-client-certificates.ts";
import {
  BLOCKED_ADDRESS_CODE,
  type Resolve,
  resolveChecked,
  systemResolve,
  untilAborted,
} from "./guarded-lookup.ts";
import {
  deliveryHeaders,
  deliveryUrl,
  elapsed,
  failureOutcome,
  responseOutcome,
  underDeadline,
} from "./outcome.ts";
import { postThroughProxy } from "./proxy-post.ts";
import { type ProxyRoute, viaProxy } from "./proxy-tunnel.ts";

export interface FetchSenderOptions {
  /** Whole-request limit: the address check, connect, TLS, headers and reading the kept body. */
  timeoutMs: number;
  /** true lets deliveries reach loopback, private, link-local and other non-public addresses. */
  allowPrivateNetworks: boolean;
  /** The whole User-Agent value, `Herald/<version>`. */
  userAgent: string;
  /** Host name resolution for the address check; defaults to node:dns lookup (Bun and Deno have it). */
  lookup?: Resolve;
  /** Which addresses are refused; defaults to isBlockedAddress. */
  isBlocked?: (ip: string) => boolean;
  /** HERALD_DELIVERY_PROXY / _NO_PROXY: deliveries tunnel through this proxy (proxy-post.ts), null: direct. */
  proxy?: ProxyRoute | null;
  /** PEM CA certificate(s) to trust instead of the runtime's store; only the proxied path uses it (tests). */
  ca?: string;
}

/**
 * The sender for Bun and Deno, on the global fetch. TLS trust is the runtime's own (Bun:
 * NODE_EXTRA_CA_CERTS; Deno: DENO_CERT or --cert).
 *
 * LIMITATION: fetch offers no hook into the connection, so the address check resolves the host
 * itself BEFORE the request and fetch then resolves it again to connect. The address actually
 * connected to is not checked: a DNS answer that changes between the two lookups (rebinding with
 * a short TTL) gets around the guard. The Node sender (undici-sender.ts) checks inside the
 * connection's own lookup and has no such gap; so does this sender's proxied path (HERALD_DELIVERY_PROXY,
 * proxy-post.ts), which tunnels to the address it checked. Runtimes also add headers of their own (Accept,
 * Accept-Encoding, ...), and connection pooling is whatever the runtime's fetch does.
 */
export function createFetchSender(options: FetchSenderOptions): Sender {
  const isBlocked = options.isBlocked ?? isBlockedAddress;
  const resolve = options.lookup ?? systemResolve;
  const inFlight = new Set<Promise<SendOutcome>>();
  const deadlines = new DeadlineQueue(options.timeoutMs);
  let closed = false;
  // Endpoints with a client certificate (ADR 22): presented the runtime's way.
  const certificates = fetchClientCertificates();

  async function attempt(req: DeliveryRequest): Promise<SendOutcome> {
    const start = performance.now();
    const url = deliveryUrl(req.url);
    if (closed || !url) return failureOutcome("connection_error", elapsed(start));
    // Through a proxy, node:net and node:tls carry the POST: the address checked is the one tunnelled to.
    if (viaProxy(options.proxy, url.hostname)) {
      const proxy = options.proxy.proxy;
      return underDeadline(deadlines, start, async (x) => {
        const headers = await deliveryHeaders(req, options.userAgent);
        const answer = await postThroughProxy(url, headers, req.body, x, {
          proxy,
          resolve,
          isBlocked: options.allowPrivateNetworks ? () => false : isBlocked,
          ca: options.ca,
          timeoutMs: options.timeoutMs,
          // A new tunnel and TLS session per delivery: the client certificate needs no pool of its own.
          cert: req.clientCertificate?.certificate,
          key: req.clientCertificate?.key,
        });
        return responseOutcome({
          ...answer,
          body: x.body.text(),
          durationMs: elapsed(start),
          now: new Date(),
        });
      });
    }

    let presented: Presented | null = null;
    const sent = underDeadline(deadlines, start, async (x) => {
      if (!options.allowPrivateNetworks) {
        if (isIpLiteral(url.hostname)) {
          if (isBlocked(url.hostname)) return failureOutcome("blocked_address", elapsed(start));
        } else {
          const checked = await untilAborted(resolveChecked(url.hostname, resolve, isBlocked), x.signal).then(
            () => null,
            (err: unknown) => err,
          );
          if (checked !== null) {
            if (x.timedOut()) return failureOutcome("timeout", elapsed(start));
            const code = (checked as { code?: unknown }).code;
            return failureOutcome(
              code === BLOCKED_ADDRESS_CODE ? "blocked_address" : "dns_error",
              elapsed(start),
            );
          }
        }
      }
      presented = req.clientCertificate ? certificates.present(req.clientCertificate) : null;
      const res = await fetch(url, {
        ...presented?.init,
        method: "POST",
        headers: await deliveryHeaders(req, options.userAgent),
        body: req.body,
        redirect: "manual",
        signal: x.signal,
      });
      // A spec-following fetch hides a manual redirect behind status 0; Node, Bun and Deno show the 3xx.
      if (res.type === "opaqueredirect") return failureOutcome("redirect", elapsed(start));
      x.status = res.status;
      if (res.body) {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          if (x.body.push(chunk)) break;
        }
      }
      return responseOutcome({
        status: x.status,
        retryAfter: res.headers.get("retry-after"),
        body: x.body.text(),
        durationMs: elapsed(start),
        now: new Date(),
      });
    });
    // Only a delivery with a client certificate has something to hand back: no extra promise for the rest.
    return req.clientCertificate ? sent.finally(() => (presented as Presented | null)?.release()) : sent;
  }

  return {
    send(req) {
      const p = attempt(req);
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      return p;
    },
    /** Refuses new work and waits for deliveries in flight (each bounded by timeoutMs). */
    async close() {
      closed = true;
      await Promise.allSettled([...inFlight]);
      await certificates.close();
    },
  };
}
