import type { Socket } from "node:net";
import type { Exchange } from "./outcome.ts";
import { openTunnel, type TunnelOptions } from "./proxy-tunnel.ts";

/** One POST written on a connection of its own (a proxy tunnel), and the answer's status line and headers. */
export interface TunnelPost {
  /** The Host header: the endpoint URL's host (and port when not the default), never the checked address. */
  host: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

const HEAD_LIMIT = 65_536;
const CRLF = Buffer.from("\r\n");

function closedEarly(what: string): Error {
  return Object.assign(new Error(`the connection closed ${what}`), { code: "ECONNRESET" });
}

/**
 * Sends one HTTP/1.1 POST (`Connection: close`) on `socket` and reads the answer: its status and
 * Retry-After, and the body into `x.body` until the answer ends or the kept part is full. Written on
 * node:net because fetch on Bun and Deno cannot be handed a connection (ADR 21). `x.signal` aborting
 * destroys the socket. The socket is destroyed when this returns or throws.
 */
export async function postOnSocket(
  socket: Socket,
  post: TunnelPost,
  x: Exchange,
): Promise<{ status: number; retryAfter: string | null }> {
  const onAbort = () => socket.destroy(x.signal.reason instanceof Error ? x.signal.reason : undefined);
  x.signal.addEventListener("abort", onAbort, { once: true });
  if (x.signal.aborted) onAbort();
  try {
    const body = Buffer.from(post.body, "utf8");
    let head = `POST ${post.path} HTTP/1.1\r\nHost: ${post.host}\r\n`;
    for (const [name, value] of Object.entries(post.headers)) head += `${name}: ${value}\r\n`;
    head += `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    socket.write(Buffer.concat([Buffer.from(head, "latin1"), body]));
    return await readAnswer(socket, x);
  } finally {
    x.signal.removeEventListener("abort", onAbort);
    socket.destroy();
  }
}

type Framing = { kind: "length"; left: number } | { kind: "chunked" } | { kind: "close" };

async function readAnswer(
  socket: Socket,
  x: Exchange,
): Promise<{ status: number; retryAfter: string | null }> {
  let buf: Buffer = Buffer.alloc(0);
  let answer: { status: number; retryAfter: string | null } | null = null;
  let framing: Framing | null = null;
  // Chunked state: bytes of data left in the current chunk (-1: a size line is next; -2: trailers).
  let chunkLeft = -1;

  /** Consumes what `buf` holds; true when the answer is complete (or the kept body is full). */
  const step = (): boolean => {
    while (true) {
      if (answer === null) {
        const end = buf.indexOf("\r\n\r\n");
        if (end === -1) {
          if (buf.length > HEAD_LIMIT) throw closedEarly("after a response head over 64 KiB");
          return false;
        }
        const lines = buf.subarray(0, end).toString("latin1").split("\r\n");
        buf = buf.subarray(end + 4);
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "");
        if (!m) throw Object.assign(new Error("the answer is not HTTP/1.1"), { code: "EPROTO_HTTP" });
        const status = Number(m[1]);
        if (status >= 100 && status < 200) continue; // 100 Continue, 103 Early Hints: the answer follows
        const headers = new Map<string, string>();
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(":");
          if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
        }
        answer = { status, retryAfter: headers.get("retry-after") ?? null };
        x.status = status;
        const length = headers.get("content-length");
        framing =
          status === 204 || status === 304
            ? { kind: "length", left: 0 }
            : /chunked/i.test(headers.get("transfer-encoding") ?? "")
              ? { kind: "chunked" }
              : length !== undefined && /^\d+$/.test(length)
                ? { kind: "length", left: Number(length) }
                : { kind: "close" };
        continue;
      }
      const f = framing as Framing;
      if (f.kind === "close") {
        const full = buf.length > 0 && x.body.push(buf);
        buf = Buffer.alloc(0);
        return full;
      }
      if (f.kind === "length") {
        const take = buf.subarray(0, f.left);
        buf = buf.subarray(take.length);
        f.left -= take.length;
        if (take.length > 0 && x.body.push(take)) return true;
        return f.left === 0;
      }
      if (chunkLeft > 0) {
        const take = buf.subarray(0, chunkLeft);
        if (take.length === 0) return false;
        buf = buf.subarray(take.length);
        chunkLeft -= take.length;
        if (x.body.push(take)) return true;
        if (chunkLeft === 0) chunkLeft = -3; // the CRLF after the data
        continue;
      }
      const eol = buf.indexOf(CRLF);
      if (eol === -1) return false;
      const line = buf.subarray(0, eol).toString("latin1");
      buf = buf.subarray(eol + 2);
      if (chunkLeft === -3) {
        chunkLeft = -1;
        continue;
      }
      if (chunkLeft === -2) {
        if (line === "") return true; // the blank line after the trailers ends the answer
        continue;
      }
      const size = Number.parseInt(line.split(";")[0] ?? "", 16);
      if (!Number.isFinite(size)) throw Object.assign(new Error("bad chunk size"), { code: "EPROTO_HTTP" });
      chunkLeft = size === 0 ? -2 : size;
    }
  };

  for await (const chunk of socket as AsyncIterable<Buffer>) {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    if (step()) return answer as unknown as { status: number; retryAfter: string | null };
  }
  if (answer !== null && (framing as Framing | null)?.kind === "close") return answer;
  throw closedEarly(answer === null ? "without an answer" : "before the answer's body ended");
}

/**
 * One delivery through the egress proxy on node:net and node:tls (the Bun and Deno sender's proxied
 * path): tunnel to the checked address, then the POST with the URL's own Host header.
 */
export async function postThroughProxy(
  url: URL,
  headers: Record<string, string>,
  body: string,
  x: Exchange,
  tunnel: Omit<TunnelOptions, "signal">,
): Promise<{ status: number; retryAfter: string | null }> {
  const https = url.protocol === "https:";
  const socket = await openTunnel(
    {
      hostname: url.hostname.replace(/^\[|\]$/g, ""),
      port: url.port === "" ? (https ? 443 : 80) : Number(url.port),
      tls: https,
    },
    { ...tunnel, signal: x.signal },
  );
  return postOnSocket(socket, { host: url.host, path: `${url.pathname}${url.search}`, headers, body }, x);
}
