import type { Dispatcher } from "undici";
import { isIpLiteral } from "../delivery/address-policy.ts";
import {
  createGuardedLookup,
  type Resolve,
  resolveChecked,
  untilAborted,
} from "../delivery/guarded-lookup.ts";
import { BodyPrefix } from "../delivery/outcome.ts";
import { postThroughProxy } from "../delivery/proxy-post.ts";
import { type ProxyRoute, viaProxy } from "../delivery/proxy-tunnel.ts";

/** One HTTP POST's answer: its status and its body as text (SQS's answers are small JSON documents). */
export interface HttpAnswer {
  status: number;
  body: string;
}

/**
 * POSTs through the address guard (CONTRACT §5, ADR 21), as an HTTPS delivery goes: rejects with an error
 * whose code is EBLOCKEDADDRESS for a refused address, or the transport's own error; `signal` aborts.
 */
export type HttpPost = (
  url: URL,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
) => Promise<HttpAnswer>;

export interface HttpPostOptions {
  timeoutMs: number;
  resolve: Resolve;
  isBlocked: (ip: string) => boolean;
  /** PEM CA certificate(s) to trust instead of the runtime's store (Node's path and the proxy's; tests). */
  ca?: string | undefined;
  /** HERALD_DELIVERY_PROXY / _NO_PROXY (ADR 21): SQS calls tunnel through it as HTTPS deliveries do. */
  proxy?: ProxyRoute | null | undefined;
}

/** Answer bodies are read up to this many bytes; an SQS answer is far smaller. */
const ANSWER_LIMIT = 64 * 1024;

const refused = (host: string) =>
  Object.assign(new Error(`delivery to ${host} refused: not a public address`), { code: "EBLOCKEDADDRESS" });

/**
 * Node's way: undici with pooled keep-alive connections whose every new connection resolves through the
 * guarded lookup, so the socket connects to the address that was checked (as undici-sender.ts does).
 * undici is imported when first used, so Bun and Deno, which take the fetch path, never load it.
 */
export function undiciPost(options: HttpPostOptions): HttpPost & { close(): Promise<void> } {
  let agent: Promise<Dispatcher> | null = null;
  const lookup = createGuardedLookup(options.resolve, options.isBlocked);
  const post = async (url: URL, headers: Record<string, string>, body: string, signal: AbortSignal) => {
    if (isIpLiteral(url.hostname) && options.isBlocked(url.hostname.replace(/^\[|\]$/g, ""))) {
      throw refused(url.hostname);
    }
    agent ??= import("undici").then(
      ({ Agent, buildConnector }) =>
        new Agent({
          keepAliveTimeout: 4_000,
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
          connect: buildConnector({
            timeout: options.timeoutMs,
            lookup: lookup as never,
            ...(options.ca !== undefined ? { ca: options.ca } : {}),
          }),
        }),
    );
    const answer = await (await agent).request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: "POST",
      headers,
      body,
      signal,
    });
    let text = "";
    for await (const chunk of answer.body) {
      text += chunk.toString();
      if (text.length >= ANSWER_LIMIT) {
        answer.body.destroy();
        break;
      }
    }
    return { status: answer.statusCode, body: text };
  };
  return Object.assign(post, {
    async close() {
      const a = agent;
      agent = null;
      if (a) await (await a.catch(() => null))?.close();
    },
  });
}

/**
 * Bun's and Deno's way: the global fetch, after checking every address the host resolves to. As in
 * fetch-sender.ts, fetch resolves the name again to connect, so a DNS answer that changes between the
 * two lookups is not caught (that sender's comment says more); Node's path has no such gap.
 */
export function fetchPost(options: HttpPostOptions): HttpPost & { close(): Promise<void> } {
  const post = async (url: URL, headers: Record<string, string>, body: string, signal: AbortSignal) => {
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (isIpLiteral(host)) {
      if (options.isBlocked(host)) throw refused(host);
    } else {
      await untilAborted(resolveChecked(host, options.resolve, options.isBlocked), signal);
    }
    const res = await fetch(url, { method: "POST", headers, body, signal, redirect: "manual" });
    const text = (await res.text()).slice(0, ANSWER_LIMIT);
    return { status: res.status, body: text };
  };
  return Object.assign(post, { close: async () => {} });
}

/**
 * Node takes undici, Bun and Deno their fetch; through the egress proxy when one is set (and NO_PROXY does
 * not name the host), every runtime takes proxy-post.ts: a CONNECT tunnel to the address Herald checked.
 */
export function runtimePost(options: HttpPostOptions): HttpPost & { close(): Promise<void> } {
  const g = globalThis as { Bun?: unknown; Deno?: unknown };
  const direct = g.Bun !== undefined || g.Deno !== undefined ? fetchPost(options) : undiciPost(options);
  const route = options.proxy ?? null;
  if (!route) return direct;
  const post: HttpPost = async (url, headers, body, signal) => {
    if (!viaProxy(route, url.hostname)) return direct(url, headers, body, signal);
    const x = { signal, timedOut: () => signal.aborted, status: null, body: new BodyPrefix(ANSWER_LIMIT) };
    const answer = await postThroughProxy(url, headers, body, x, {
      proxy: route.proxy,
      resolve: options.resolve,
      isBlocked: options.isBlocked,
      ca: options.ca,
      timeoutMs: options.timeoutMs,
    });
    return { status: answer.status, body: x.body.text() };
  };
  return Object.assign(post, { close: () => direct.close() });
}
