import { connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { bypassesProxy, type EgressProxy, type NoProxyRule } from "../../domain/egress-proxy.ts";
import { isIpLiteral } from "./address-policy.ts";
import { BlockedAddressError, type Resolve, resolveChecked, untilAborted } from "./guarded-lookup.ts";

/** HERALD_DELIVERY_PROXY and HERALD_DELIVERY_NO_PROXY as the senders take them. */
export interface ProxyRoute {
  proxy: EgressProxy;
  noProxy: readonly NoProxyRule[];
}

/** True when a delivery to this URL host goes through the proxy (a route is set and NO_PROXY does not match). */
export function viaProxy(route: ProxyRoute | null | undefined, hostname: string): route is ProxyRoute {
  return route != null && !bypassesProxy(route.noProxy, hostname);
}

/** Codes of the errors a tunnel fails with; classify.ts names them (connection_error, timeout). */
export const PROXY_REFUSED_CODE = "EPROXYREFUSED";
export const PROXY_TIMEOUT_CODE = "EPROXYTIMEOUT";

/**
 * The proxy answered CONNECT with something other than 2xx (407 bad credentials, 403 not allowed,
 * 502 it could not reach the address, ...). 504 carries PROXY_TIMEOUT_CODE: the proxy gave up waiting.
 */
export class ProxyRefusedError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(status: number, authority: string) {
    super(`the egress proxy answered ${status} to CONNECT ${authority}`);
    this.status = status;
    this.name = "ProxyRefusedError";
    this.code = status === 504 ? PROXY_TIMEOUT_CODE : PROXY_REFUSED_CODE;
  }
}

export interface TunnelOptions {
  proxy: EgressProxy;
  /** Resolves the endpoint's host name; Herald resolves, never the proxy. */
  resolve: Resolve;
  /** Which addresses are refused (`() => false` when private networks are allowed). */
  isBlocked: (ip: string) => boolean;
  /** PEM CA certificate(s) to trust instead of the runtime's store. */
  ca?: string | undefined;
  /** Limit for opening the tunnel: proxy connect, CONNECT answer and the TLS handshake. */
  timeoutMs: number;
  /** The endpoint's client certificate (PEM chain) and plain key, presented inside the tunnel (ADR 22). */
  cert?: string | undefined;
  key?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** Where one delivery goes: the URL's host (IPv6 without brackets), port, and whether it is https. */
export interface TunnelTarget {
  hostname: string;
  port: number;
  tls: boolean;
}

/**
 * The addresses to ask the proxy for, in the resolver's order: a literal IP as is (refused when
 * blocked), a name's every address checked by Herald (any blocked refuses the name). The proxy is never
 * given a name, so it cannot resolve one to an address Herald did not check (ADR 21).
 */
export async function checkedAddresses(
  hostname: string,
  resolve: Resolve,
  isBlocked: (ip: string) => boolean,
): Promise<string[]> {
  if (isIpLiteral(hostname)) {
    if (isBlocked(hostname)) throw new BlockedAddressError(hostname, hostname);
    return [hostname];
  }
  return (await resolveChecked(hostname, resolve, isBlocked)).map((a) => a.address);
}

/** A proxy answer saying it could not reach that address (the next one may do): 502, 503, 504. */
const UNREACHED = new Set([502, 503, 504]);
/** At most this many addresses of one name are tried, as a browser's happy eyeballs would. */
const MAX_ADDRESSES = 4;

/**
 * Opens a connection to `target` through the proxy: resolves and checks the host, connects to the
 * proxy, asks it to `CONNECT <checked address>:<port>`, and for https starts TLS inside the tunnel with
 * SNI and certificate verification for the original host name. When the proxy cannot reach an address
 * (502, 503, 504: `::1` first for a receiver listening on IPv4 only), the next checked one is asked for,
 * within the same time limit. Resolves with a socket ready for HTTP/1.1; on Node, Bun and Deno alike
 * (node:net and node:tls).
 */
export async function openTunnel(target: TunnelTarget, o: TunnelOptions): Promise<Socket> {
  const deadline = performance.now() + o.timeoutMs;
  const addresses = await untilAborted(checkedAddresses(target.hostname, o.resolve, o.isBlocked), o.signal);
  for (let i = 0; ; i++) {
    const address = addresses[i] as string;
    try {
      return await tunnelTo(address, target, o, deadline);
    } catch (err) {
      const next = i + 1 < Math.min(addresses.length, MAX_ADDRESSES);
      if (!(next && err instanceof ProxyRefusedError && UNREACHED.has(err.status))) throw err;
    }
  }
}

function tunnelTimeout(ms: number): Error {
  return Object.assign(new Error(`the egress proxy did not open a tunnel in ${Math.round(ms)} ms`), {
    code: PROXY_TIMEOUT_CODE,
  });
}

async function tunnelTo(
  address: string,
  target: TunnelTarget,
  o: TunnelOptions,
  deadline: number,
): Promise<Socket> {
  const authority = `${address.includes(":") ? `[${address}]` : address}:${target.port}`;
  const left = deadline - performance.now();
  if (left <= 0) throw tunnelTimeout(o.timeoutMs);
  const socket = netConnect({ host: o.proxy.host, port: o.proxy.port });
  let current: Socket = socket;
  const fail = (err: Error) => current.destroy(err);
  const timer = setTimeout(() => fail(tunnelTimeout(o.timeoutMs)), left);
  const onAbort = () => fail(o.signal?.reason instanceof Error ? o.signal.reason : new Error("aborted"));
  o.signal?.addEventListener("abort", onAbort, { once: true });
  if (o.signal?.aborted) onAbort();
  try {
    await settled(socket, "connect");
    const auth = o.proxy.authorization ? `Proxy-Authorization: ${o.proxy.authorization}\r\n` : "";
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`);
    const status = await connectAnswer(socket);
    if (status < 200 || status > 299) {
      socket.destroy();
      throw new ProxyRefusedError(status, authority);
    }
    if (!target.tls) return socket;
    const secure = tlsConnect({
      socket,
      // The certificate is checked for the endpoint's host name, and SNI names it (never an IP).
      host: target.hostname,
      ...(isIpLiteral(target.hostname) ? {} : { servername: target.hostname }),
      ALPNProtocols: ["http/1.1"],
      ...(o.ca !== undefined ? { ca: o.ca } : {}),
      ...(o.cert !== undefined && o.key !== undefined ? { cert: o.cert, key: o.key } : {}),
    });
    current = secure;
    await settled(secure, "secureConnect");
    // From here the TLS socket reports the connection's failures; one on the TCP socket under it must
    // not go unhandled (and crash the process) on a runtime that emits it there too.
    socket.on("error", () => {});
    return secure;
  } catch (err) {
    current.destroy();
    socket.destroy();
    throw err;
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener("abort", onAbort);
  }
}

/** Resolves on `event`, rejects on error or close before it. */
function settled(socket: Socket, event: "connect" | "secureConnect"): Promise<void> {
  return new Promise((resolve, reject) => {
    const onEvent = () => {
      cleanup();
      resolve();
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onClose = () =>
      onError(Object.assign(new Error("the egress proxy closed the connection"), { code: "ECONNRESET" }));
    const cleanup = () => {
      socket.off(event, onEvent);
      socket.off("error", onError);
      socket.off("close", onClose);
    };
    socket.once(event, onEvent);
    socket.once("error", onError);
    socket.once("close", onClose);
  });
}

const HEAD_LIMIT = 16_384;

/** Reads the proxy's answer to CONNECT up to its blank line; the status code. Bytes past it are put back. */
function connectAnswer(socket: Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    const onReadable = () => {
      let chunk: Buffer | null;
      // biome-ignore lint/suspicious/noAssignInExpressions: the stream read loop
      while ((chunk = socket.read() as Buffer | null) !== null) {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf("\r\n\r\n");
        if (end !== -1) {
          cleanup();
          const rest = head.subarray(end + 4);
          if (rest.length > 0) socket.unshift(rest);
          const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, end).toString("latin1"));
          if (status) resolve(Number(status[1]));
          else
            reject(
              Object.assign(new Error("the egress proxy's answer is not HTTP"), { code: PROXY_REFUSED_CODE }),
            );
          return;
        }
        if (head.length > HEAD_LIMIT) {
          cleanup();
          reject(
            Object.assign(new Error("the egress proxy's answer is too long"), { code: PROXY_REFUSED_CODE }),
          );
          return;
        }
      }
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onEnd = () =>
      onError(
        Object.assign(new Error("the egress proxy closed the connection before answering CONNECT"), {
          code: "ECONNRESET",
        }),
      );
    const cleanup = () => {
      socket.off("readable", onReadable);
      socket.off("error", onError);
      socket.off("end", onEnd);
      socket.off("close", onEnd);
    };
    socket.on("readable", onReadable);
    socket.once("error", onError);
    socket.once("end", onEnd);
    socket.once("close", onEnd);
  });
}

/** What undici hands a custom `connect` function, and the callback it expects (undici's connector type). */
type ConnectorOptions = { hostname: string; protocol: string; port: string };
type ConnectorCallback = (...args: [null, Socket] | [Error, null]) => void;

/**
 * An undici `connect` function that opens every new pooled connection through the proxy (the Node
 * sender's proxied Agent): keep-alive reuses the tunnel, and each new one checks the address again.
 */
export function tunnelConnector(o: Omit<TunnelOptions, "signal">) {
  return (opts: ConnectorOptions, callback: ConnectorCallback): void => {
    const tls = opts.protocol === "https:";
    const target = { hostname: opts.hostname, port: Number(opts.port) || (tls ? 443 : 80), tls };
    openTunnel(target, o).then(
      (socket) => callback(null, socket),
      (err: Error) => callback(err, null),
    );
  };
}

/** The senders' `proxy` option from the parsed configuration: null when HERALD_DELIVERY_PROXY is unset. */
export function proxyRoute(config: {
  deliveryProxy: EgressProxy | null;
  deliveryNoProxy: readonly NoProxyRule[];
}): ProxyRoute | null {
  return config.deliveryProxy ? { proxy: config.deliveryProxy, noProxy: config.deliveryNoProxy } : null;
}
