import type { IncomingHttpHeaders } from "node:http";
import type { LookupFunction } from "node:net";
import { Agent, buildConnector, type Dispatcher } from "undici";
import type { ClientIdentity, DeliveryRequest, Sender } from "../../app/ports/sending.ts";
import type { SendOutcome } from "../../domain/delivery.ts";
import type { EgressProxy } from "../../domain/egress-proxy.ts";
import { signedHeaders } from "../../domain/signature-scheme.ts";
import { isBlockedAddress, isIpLiteral } from "./address-policy.ts";
import { classifyFailure } from "./classify.ts";
import { reportingRefusals } from "./client-identities.ts";
import { DeadlineQueue } from "./deadlines.ts";
import { createGuardedLookup, type Resolve, systemResolve } from "./guarded-lookup.ts";
import { IdentityPools } from "./identity-pools.ts";
import { nodeEd25519 } from "./node-ed25519.ts";
import { nodeHmac } from "./node-hmac.ts";
import {
  BodyPrefix,
  deliveryHeaderFields,
  deliveryUrl,
  elapsed,
  failureOutcome,
  responseOutcome,
} from "./outcome.ts";
import { type ProxyRoute, tunnelConnector, viaProxy } from "./proxy-tunnel.ts";

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
  /** HERALD_DELIVERY_PROXY / _NO_PROXY: deliveries tunnel through this proxy (proxy-tunnel.ts), null: direct. */
  proxy?: ProxyRoute | null;
}

/** One way out (direct, or through the egress proxy): its Agent, and an Agent per client identity (ADR 22). */
interface Way {
  agent: Agent;
  identities: IdentityPools<Agent>;
}

/** Where a delivery URL goes, worked out once per URL: parsing a URL costs more than signing. */
interface Target {
  /** Direct, or with connections that tunnel through the egress proxy. */
  way: Way;
  origin: string;
  path: string;
  /** Why nothing may be sent there, or null. */
  refused: "connection_error" | "blocked_address" | null;
}

const TARGET_CACHE_LIMIT = 10_000;
const TIMED_OUT = Object.assign(new Error("delivery timed out"), { name: "TimeoutError" });

/**
 * The Node sender: an undici Agent with pooled keep-alive connections whose every new connection
 * resolves through a guarded lookup, so the address the socket connects to is the one checked.
 * Redirects are never followed (no redirect interceptor). TLS trust is Node's own store, which
 * includes NODE_EXTRA_CA_CERTS, unless `ca` replaces it.
 *
 * Each attempt is one `dispatch` with a handler of our own (no response stream, no AbortController),
 * and one shared timer enforces the whole-request limit for all of them: on the delivery hot path
 * those per-request objects cost more than the HTTP exchange itself.
 */
export function createUndiciSender(options: UndiciSenderOptions): Sender {
  const isBlocked = options.allowPrivateNetworks ? () => false : (options.isBlocked ?? isBlockedAddress);
  const resolve = options.lookup ?? systemResolve;
  const lookup = createGuardedLookup(resolve, isBlocked) as unknown as LookupFunction;
  const pool = {
    connections: options.maxConnectionsPerOrigin ?? null,
    pipelining: 1,
    keepAliveTimeout: 4_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  };
  const connect: buildConnector.BuildOptions = {
    timeout: options.timeoutMs,
    lookup,
    ...(options.ca !== undefined ? { ca: options.ca } : {}),
  };
  // Every Agent's connections report what the receiver said about TLS (client-identities.ts); endpoints
  // with a client certificate get an Agent per identity, made like the shared one (ADR 22).
  const agentOn = (connector: buildConnector.connector, presentsCertificate: boolean) =>
    new Agent({ ...pool, connect: reportingRefusals(connector, presentsCertificate) });
  const direct: Way = {
    agent: agentOn(buildConnector(connect), false),
    identities: new IdentityPools((identity) =>
      agentOn(buildConnector({ ...connect, cert: identity.certificate, key: identity.key }), true),
    ),
  };
  const route = options.proxy ?? null;
  // Through the egress proxy (ADR 21): the same, each connection a tunnel to the address Herald checked,
  // the client certificate (if any) presented inside it.
  const tunnel = (proxy: EgressProxy, identity?: ClientIdentity) =>
    tunnelConnector({
      proxy,
      resolve,
      isBlocked,
      ca: options.ca,
      timeoutMs: options.timeoutMs,
      cert: identity?.certificate,
      key: identity?.key,
    });
  const proxied: Way | null = route
    ? {
        agent: agentOn(tunnel(route.proxy), false),
        identities: new IdentityPools((identity) => agentOn(tunnel(route.proxy, identity), true)),
      }
    : null;
  const deadlines = new DeadlineQueue(options.timeoutMs);
  const targets = new Map<string, Target>();

  function target(raw: string): Target {
    let t = targets.get(raw);
    if (t === undefined) {
      const url = deliveryUrl(raw);
      t = url
        ? {
            way: proxied && viaProxy(route, url.hostname) ? proxied : direct,
            origin: url.origin,
            path: `${url.pathname}${url.search}`,
            // A literal IP is connected to without a lookup, so the guard in `lookup` never sees it.
            refused: isIpLiteral(url.hostname) && isBlocked(url.hostname) ? "blocked_address" : null,
          }
        : { way: direct, origin: "", path: "", refused: "connection_error" };
      if (targets.size >= TARGET_CACHE_LIMIT) targets.clear();
      targets.set(raw, t);
    }
    return t;
  }

  function send(req: DeliveryRequest): Promise<SendOutcome> {
    const start = performance.now();
    const t = target(req.url);
    if (t.refused) return Promise.resolve(failureOutcome(t.refused, elapsed(start)));
    const headers = deliveryHeaderFields(req, options.userAgent, signedHeaders(req, nodeHmac, nodeEd25519));
    return new Promise((done) => {
      const exchange = new Exchange(start, done);
      exchange.deadline = deadlines.watch(() => exchange.timeout());
      try {
        const dispatcher = req.clientCertificate ? t.way.identities.get(req.clientCertificate) : t.way.agent;
        dispatcher.dispatch(
          { origin: t.origin, path: t.path, method: "POST", headers, body: req.body },
          exchange,
        );
      } catch (err) {
        exchange.onResponseError(null, err as Error);
      }
    });
  }

  return {
    send,
    async close() {
      const ways = proxied ? [direct, proxied] : [direct];
      await Promise.all(ways.flatMap((way) => [way.agent.close(), way.identities.close()]));
    },
  };
}

/** One POST in flight: collects status, Retry-After and the kept body, and settles exactly once. */
class Exchange implements Dispatcher.DispatchHandler {
  deadline: { settle(): void } | null = null;
  private controller: Dispatcher.DispatchController | null = null;
  private status: number | null = null;
  private retryAfter: string | null = null;
  private body: BodyPrefix | null = null;
  private timedOut = false;
  private settled = false;

  private readonly start: number;
  private readonly done: (outcome: SendOutcome) => void;
  constructor(start: number, done: (outcome: SendOutcome) => void) {
    this.start = start;
    this.done = done;
  }

  /** The shared deadline passed: abort whatever stage the exchange is in. */
  timeout() {
    this.timedOut = true;
    if (this.controller) this.controller.abort(TIMED_OUT);
    else this.onResponseError(null, TIMED_OUT);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.timedOut) controller.abort(TIMED_OUT);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    this.controller = controller;
    this.status = statusCode;
    const ra = headers["retry-after"];
    this.retryAfter = Array.isArray(ra) ? (ra[0] ?? null) : (ra ?? null);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.body ??= new BodyPrefix();
    if (this.body.push(chunk)) {
      // The limit is reached: answer with what was kept and drop the rest with the connection.
      this.finish();
      controller.abort(new Error("response body limit reached"));
    }
  }

  onResponseEnd(): void {
    this.finish();
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: Error): void {
    if (this.settled) return;
    this.settle(
      failureOutcome(this.timedOut ? "timeout" : classifyFailure(err), elapsed(this.start), {
        status: this.status,
        body: this.status === null ? null : (this.body?.text() ?? ""),
      }),
    );
  }

  private finish() {
    if (this.settled) return;
    this.settle(
      responseOutcome({
        status: this.status ?? 0,
        retryAfter: this.retryAfter,
        body: this.body?.text() ?? "",
        durationMs: elapsed(this.start),
        now: new Date(),
      }),
    );
  }

  private settle(outcome: SendOutcome) {
    this.settled = true;
    this.deadline?.settle();
    this.controller = null;
    this.done(outcome);
  }
}
