import { createHmac, timingSafeEqual } from "node:crypto";
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { PATIENCE_MS } from "./patience.ts";

/**
 * A real webhook receiver for tests: an HTTP or HTTPS server on 127.0.0.1 (random port) that
 * verifies every request the way the specification tells receivers to, records it, and answers
 * as scripted. Independent of src/domain/signing.ts on purpose (node:crypto HMAC), so a signing
 * bug on the sending side cannot verify itself.
 *
 *   const tls = await testTls();
 *   const rx = await startReceiver({ tls, secrets: [secret] });
 *   rx.setBehaviour(behaviours.status(500));   // or (req) => (req.index === 0 ? ... : ...)
 *   ... deliver to rx.url ...
 *   const [req] = await rx.waitFor(1);
 *   expect(req.verdict.ok).toBe(true);
 *   await rx.close();
 */

/** Why a request failed verification (seed, "Verifying a delivery"). */
export type VerifyReason =
  | "missing_timestamp"
  | "malformed_timestamp"
  | "stale_timestamp"
  | "missing_signature"
  | "malformed_signature"
  | "signature_mismatch";

/**
 * The verification result. `matches` lists every (signature position in the header, secret
 * position in `secrets`) pair that verified, so a test can prove both signatures of a rotation.
 */
export type Verdict =
  | { ok: true; matches: Array<{ signature: number; secret: number }> }
  | { ok: false; reason: VerifyReason };

/** What the receiver does with one request (after reading and recording it). */
export type Behaviour =
  | {
      kind: "respond";
      status: number;
      headers?: Record<string, string>;
      body?: string | Uint8Array;
      /** Wait this long before sending anything. */
      delayMs?: number;
      /** Send the status, headers and the first half of the body, then wait this long before the rest. */
      stallBodyMs?: number;
    }
  /** Abort the TCP connection with a RST, no answer. */
  | { kind: "reset" }
  /** Close the connection cleanly (FIN) without answering. */
  | { kind: "close" }
  /** Never answer; the connection stays open until the client gives up or the receiver closes. */
  | { kind: "hang" };

/** Chooses a behaviour per request, e.g. by `req.index`; it sees the request as recorded. */
export type BehaviourFn = (req: Omit<ReceivedRequest, "behaviour">) => Behaviour;

/** Ready-made behaviours. */
export const behaviours = {
  /** The default: 200 when the signature verifies, 401 (reason in the body) when it does not. */
  verify: ((req) =>
    req.verdict.ok
      ? { kind: "respond", status: 200, body: "ok" }
      : { kind: "respond", status: 401, body: req.verdict.reason }) as BehaviourFn,
  status: (status: number, body?: string | Uint8Array, headers?: Record<string, string>): Behaviour => ({
    kind: "respond",
    status,
    ...(body !== undefined ? { body } : {}),
    ...(headers ? { headers } : {}),
  }),
  slow: (delayMs: number, status = 200): Behaviour => ({ kind: "respond", status, body: "late", delayMs }),
  stallBody: (stallBodyMs: number, body = "x".repeat(64), status = 200): Behaviour => ({
    kind: "respond",
    status,
    body,
    stallBodyMs,
  }),
  redirect: (location: string, status = 302): Behaviour => ({
    kind: "respond",
    status,
    headers: { location },
    body: "moved",
  }),
  retryAfter: (status: 429 | 503, value: string): Behaviour => ({
    kind: "respond",
    status,
    headers: { "retry-after": value },
    body: "slow down",
  }),
  gone: (): Behaviour => ({ kind: "respond", status: 410, body: "gone" }),
  reset: (): Behaviour => ({ kind: "reset" }),
  close: (): Behaviour => ({ kind: "close" }),
  hang: (): Behaviour => ({ kind: "hang" }),
};

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  /** 0-based order of arrival. */
  index: number;
  method: string;
  path: string;
  /** Lower-cased header names, as node:http parses them. */
  headers: IncomingHttpHeaders;
  /** Names and values as sent, alternating. */
  rawHeaders: string[];
  /** The raw body bytes, exactly as received. */
  body: Buffer;
  verdict: Verdict;
  receivedAt: Date;
  /**
   * How many requests had arrived when the receiver answered this one, or its connection closed (its
   * sender went away, or a reset or close behaviour ended it), whichever came first; null while it is
   * held or hangs with its connection open. Counted in arrivals, not milliseconds: a request sent after
   * this one ended has an index of at least this.
   */
  arrivalsWhenAnswered: number | null;
  /** The TCP connection it came on (1, 2, ... per receiver); equal ids mean a reused connection. */
  connectionId: number;
  /** The TLS server name (SNI) the client asked for; null over plain HTTP or when it sent none. */
  sni: string | null;
  /** What the receiver did with it. */
  behaviour: Behaviour;
  /** The subject CN of the client certificate the connection presented (mutual TLS); null for none. */
  clientCertificate: string | null;
}

export interface ReceiverOptions {
  /** Serve HTTPS with this certificate (e.g. from testTls()); plain HTTP when absent. */
  tls?: {
    cert: string;
    key: string;
    /** Require a client certificate signed by this CA (PEM): mutual TLS, as a receiver that demands it does. */
    clientCa?: string;
  };
  /** Secrets a request may be signed with; any one of them verifying is enough. */
  secrets: string[];
  /** Initial behaviour, fixed or per request; default `behaviours.verify`. */
  behaviour?: Behaviour | BehaviourFn;
  /** Allowed clock difference, seconds; 300 as the specification says. */
  toleranceSeconds?: number;
}

export interface Receiver {
  /** `https://127.0.0.1:<port>/webhook` (http:// without tls). */
  url: string;
  /** `https://127.0.0.1:<port>` */
  origin: string;
  port: number;
  /** Every request so far, in order of arrival (live array). */
  readonly requests: readonly ReceivedRequest[];
  /** TCP connections accepted so far, including ones that never sent a request (e.g. a failed TLS handshake). */
  readonly connections: number;
  /**
   * Resolves with all requests once `count` have arrived (or `predicate(requests)` holds); checked on
   * every arrival, rejects after `timeoutMs` (default PATIENCE_MS) saying what did arrive.
   */
  waitFor(
    countOrPredicate: number | ((requests: readonly ReceivedRequest[]) => boolean),
    timeoutMs?: number,
  ): Promise<readonly ReceivedRequest[]>;
  setBehaviour(behaviour: Behaviour | BehaviourFn): void;
  /** Stops listening, cancels pending answers, destroys open sockets. Idempotent. */
  close(): Promise<void>;
}

const SIGNATURE_PART = /^v1=[0-9a-f]{64}$/;

/** The seed's receiver steps: raw body, timestamp within tolerance, v1 HMAC, constant-time compare. */
export function verifyDelivery(
  headers: IncomingHttpHeaders,
  rawBody: Buffer,
  secrets: readonly string[],
  nowSeconds: number,
  toleranceSeconds = 300,
): Verdict {
  const timestamp = single(headers["x-webhook-timestamp"]);
  if (!timestamp) return { ok: false, reason: "missing_timestamp" };
  if (!/^\d+$/.test(timestamp)) return { ok: false, reason: "malformed_timestamp" };
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds)
    return { ok: false, reason: "stale_timestamp" };
  const parts = (single(headers["x-webhook-signature"]) ?? "").split(" ").filter((p) => p !== "");
  if (parts.length === 0) return { ok: false, reason: "missing_signature" };
  if (!parts.every((p) => SIGNATURE_PART.test(p))) return { ok: false, reason: "malformed_signature" };
  const matches: Array<{ signature: number; secret: number }> = [];
  secrets.forEach((secret, secretIndex) => {
    const expected = Buffer.from(
      `v1=${createHmac("sha256", Buffer.from(secret, "utf8")).update(`${timestamp}.`).update(rawBody).digest("hex")}`,
    );
    parts.forEach((part, signatureIndex) => {
      // Same length guaranteed by SIGNATURE_PART, so timingSafeEqual does not throw.
      if (timingSafeEqual(expected, Buffer.from(part)))
        matches.push({ signature: signatureIndex, secret: secretIndex });
    });
  });
  return matches.length > 0 ? { ok: true, matches } : { ok: false, reason: "signature_mismatch" };
}

function sniOf(socket: unknown): string | null {
  const name = (socket as { servername?: unknown }).servername;
  return typeof name === "string" && name !== "" ? name : null;
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Starts a receiver on 127.0.0.1 with a random port. Always `close()` it (afterEach/finally). */
/**
 * The most requests one path had in flight at once, as the receiver saw them: each from its arrival
 * until it was answered or its connection closed (`arrivalsWhenAnswered`). Counted in arrivals, so a
 * request sent the moment the one before it was answered never counts as beside it, as arrival times a
 * millisecond apart did.
 */
export function mostAtOnce(requests: readonly ReceivedRequest[]): number {
  const byPath = new Map<string, [position: number, change: number][]>();
  for (const r of requests) {
    const steps = byPath.get(r.path) ?? [];
    steps.push([r.index, 1]);
    // An answer given once `n` requests had arrived comes before the arrival of index `n`.
    if (r.arrivalsWhenAnswered !== null) steps.push([r.arrivalsWhenAnswered - 0.5, -1]);
    byPath.set(r.path, steps);
  }
  let most = 0;
  for (const steps of byPath.values()) {
    let open = 0;
    for (const [, change] of steps.sort((a, b) => a[0] - b[0])) {
      open += change;
      most = Math.max(most, open);
    }
  }
  return most;
}

export async function startReceiver(options: ReceiverOptions): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const waiters = new Set<{ check: () => boolean; fail: (e: Error) => void }>();
  let behaviour: Behaviour | BehaviourFn = options.behaviour ?? behaviours.verify;
  let connections = 0;
  let closed = false;
  const connectionIds = new WeakMap<Socket, number>();
  const rawSockets = new WeakMap<Socket, Socket>();

  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", () => {});
    res.on("error", () => {});
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const partial = {
        index: requests.length,
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body,
        verdict: verifyDelivery(
          req.headers,
          body,
          options.secrets,
          Math.floor(Date.now() / 1000),
          options.toleranceSeconds,
        ),
        receivedAt: new Date(),
        arrivalsWhenAnswered: null,
        connectionId: connectionIds.get(req.socket) ?? 0,
        sni: sniOf(req.socket),
        clientCertificate: peerName(req.socket),
      };
      const chosen = typeof behaviour === "function" ? behaviour(partial) : behaviour;
      const received: ReceivedRequest = { ...partial, behaviour: chosen };
      requests.push(received);
      for (const w of waiters) w.check();
      const ended = () => {
        received.arrivalsWhenAnswered ??= requests.length;
      };
      // A request whose sender went away (its connection closed) is not in flight any more either.
      res.once("close", ended);
      act(chosen, req, res, ended);
    });
  };

  const act = (b: Behaviour, req: IncomingMessage, res: ServerResponse, ended: () => void) => {
    const socket = req.socket;
    switch (b.kind) {
      case "reset":
        ended();
        // A TLS socket has no TCP handle of its own: reset the TCP socket underneath.
        (rawSockets.get(socket) ?? socket).resetAndDestroy();
        return;
      case "close":
        ended();
        socket.destroySoon();
        return;
      case "hang":
        return;
      case "respond": {
        const answer = () => {
          ended();
          if (res.destroyed || socket.destroyed) return;
          const body = b.body === undefined ? Buffer.alloc(0) : Buffer.from(b.body);
          res.writeHead(b.status, { "content-length": String(body.length), ...b.headers });
          if (b.stallBodyMs === undefined) {
            res.end(body);
            return;
          }
          const half = Math.floor(body.length / 2);
          res.write(body.subarray(0, half));
          later(b.stallBodyMs, () => {
            if (!res.destroyed) res.end(body.subarray(half));
          });
        };
        if (b.delayMs) later(b.delayMs, answer);
        else answer();
      }
    }
  };

  const server = options.tls
    ? https.createServer(
        {
          cert: options.tls.cert,
          key: options.tls.key,
          ...(options.tls.clientCa === undefined
            ? {}
            : { ca: options.tls.clientCa, requestCert: true, rejectUnauthorized: true }),
        },
        handler,
      )
    : http.createServer(handler);
  server.on("connection", (socket: Socket) => {
    connections += 1;
    connectionIds.set(socket, connections);
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  });
  if (options.tls) {
    // node:https hands the TLS socket (not the raw one) to the request; map it to the same id.
    server.on("secureConnection", (tlsSocket: Socket) => {
      const raw = (tlsSocket as Socket & { _parent?: Socket })._parent;
      if (raw) rawSockets.set(tlsSocket, raw);
      connectionIds.set(tlsSocket, (raw && connectionIds.get(raw)) || connections);
      sockets.add(tlsSocket);
      tlsSocket.on("close", () => sockets.delete(tlsSocket));
      tlsSocket.on("error", () => {});
    });
    server.on("tlsClientError", () => {});
  }
  server.on("clientError", (_err, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const origin = `${options.tls ? "https" : "http"}://127.0.0.1:${port}`;

  return {
    url: `${origin}/webhook`,
    origin,
    port,
    requests,
    get connections() {
      return connections;
    },
    waitFor(countOrPredicate, timeoutMs = PATIENCE_MS) {
      const done =
        typeof countOrPredicate === "number"
          ? (all: readonly ReceivedRequest[]) => all.length >= countOrPredicate
          : countOrPredicate;
      if (done(requests)) return Promise.resolve(requests);
      if (closed) return Promise.reject(new Error("receiver is closed"));
      return new Promise((resolve, reject) => {
        const waiter = {
          check: () => {
            if (!done(requests)) return false;
            finish();
            resolve(requests);
            return true;
          },
          fail: (e: Error) => {
            finish();
            reject(e);
          },
        };
        const timer = setTimeout(() => {
          const seen = requests.map((r) => `#${r.index} ${r.method} ${r.path} ${JSON.stringify(r.verdict)}`);
          waiter.fail(
            new Error(
              `receiver: condition not met within ${timeoutMs} ms; ${requests.length} request(s): ${seen.join("; ") || "none"}`,
            ),
          );
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          waiters.delete(waiter);
        };
        waiters.add(waiter);
      });
    },
    setBehaviour(next) {
      behaviour = next;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const w of waiters) w.fail(new Error("receiver closed while waiting"));
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await stopped;
    },
  };
}

/** The subject CN of the client certificate a TLS connection presented, or null. */
function peerName(socket: Socket): string | null {
  const tls = socket as Socket & { getPeerCertificate?: () => { subject?: { CN?: string } } };
  const cn = tls.getPeerCertificate?.()?.subject?.CN;
  return typeof cn === "string" ? cn : null;
}
