import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.ts";
import { respondProblem } from "../problem.ts";

/** Largest request body accepted: 256 KiB. */
export const MAX_BODY_BYTES = 256 * 1024;
const JSON_MEDIA_TYPE = /^application\/([\w.+-]+\+)?json\s*(;.*)?$/i;
const utf8 = new TextDecoder();

type Read = { text: string } | { tooLarge: true };

/** What @hono/node-server passes as the environment: the Node request, whose bytes we can read directly. */
interface NodeIncoming {
  on(event: "data", f: (chunk: Uint8Array) => void): unknown;
  on(event: "end", f: () => void): unknown;
  on(event: "error", f: (e: Error) => void): unknown;
  off(event: "data", f: (chunk: Uint8Array) => void): unknown;
  readableEnded: boolean;
}

function nodeIncoming(c: Context<AppEnv>): NodeIncoming | null {
  const incoming = (c.env as { incoming?: Partial<NodeIncoming> } | undefined)?.incoming;
  return incoming && typeof incoming.on === "function" && incoming.readableEnded === false
    ? (incoming as NodeIncoming)
    : null;
}

function join(chunks: Uint8Array[], size: number): string {
  if (chunks.length === 1) return utf8.decode(chunks[0]);
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return utf8.decode(all);
}

/**
 * On Node the body is read straight from the socket stream: turning it into a web ReadableStream and
 * a Request first costs more than everything else a publish does. Stops at the limit.
 */
function readNode(incoming: NodeIncoming): Promise<Read> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const onData = (chunk: Uint8Array) => {
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) {
        incoming.off("data", onData);
        resolve({ tooLarge: true });
        return;
      }
      chunks.push(chunk);
    };
    incoming.on("data", onData);
    incoming.on("end", () => resolve({ text: join(chunks, size) }));
    incoming.on("error", reject);
  });
}

/** Any runtime: the web Request's body stream, read up to the limit. */
async function readWeb(c: Context<AppEnv>): Promise<Read> {
  const body = c.req.raw.body;
  if (!body) return { text: "" };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      return { tooLarge: true };
    }
    chunks.push(value);
  }
  return { text: chunks.length === 0 ? "" : join(chunks, size) };
}

/**
 * The middleware of every route that takes a JSON body: at most 256 KiB (413), application/json (415),
 * valid JSON (400). An empty body counts as no body, so optional bodies may be left out whatever the
 * Content-Type says. The text is left in hono's body cache, so the validator parses the same bytes.
 */
const readJsonBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  const declared = c.req.header("Content-Length");
  const read: Read =
    declared !== undefined && Number(declared) > MAX_BODY_BYTES
      ? { tooLarge: true }
      : await (() => {
          const incoming = nodeIncoming(c);
          return incoming ? readNode(incoming) : readWeb(c);
        })();
  if ("tooLarge" in read) {
    // The rest of the body is never read, so the connection cannot carry another request: close it.
    return respondProblem(c, {
      code: "payload_too_large",
      detail: "The request body is larger than 256 KiB.",
      headers: { Connection: "close" },
    });
  }
  const { text } = read;
  if (text.length === 0) {
    const headers = new Headers(c.req.raw.headers);
    for (const h of ["content-type", "content-length", "transfer-encoding"]) headers.delete(h);
    c.req.raw = new Request(c.req.raw.url, { method: c.req.method, headers });
    c.req.bodyCache = {};
    return next();
  }
  // hono keeps body promises in this cache (its type names the settled value).
  c.req.bodyCache = { text: Promise.resolve(text) as unknown as string };
  if (!JSON_MEDIA_TYPE.test(c.req.header("Content-Type") ?? "")) {
    return respondProblem(c, {
      code: "unsupported_media_type",
      detail: "Send the request body as application/json.",
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return respondProblem(c, { code: "invalid_json", detail: "The request body is not valid JSON." });
  }
  // Only a \u escape can put NUL or a lone surrogate into parsed JSON, so most bodies skip the walk.
  const bad = SUSPECT_ESCAPE.test(text) ? unsafeTextPath(value) : null;
  if (bad) {
    return respondProblem(c, {
      code: "validation_failed",
      detail: "The request is not valid.",
      errors: [
        {
          path: ["body", ...bad].join("."),
          message: "must not contain NUL characters or unpaired surrogates",
        },
      ],
    });
  }
  return next();
};

const SUSPECT_ESCAPE = /\\u(?:0000|[dD][89abcdefABCDEF])/;
// U+0000, or a surrogate that is not part of a pair.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding U+0000 is the point of this pattern.
const UNSAFE_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The path of the first string (key or value) holding NUL or an unpaired UTF-16 surrogate: text that
 * no store or receiver keeps faithfully (PostgreSQL-backed stores refuse NUL outright). Iterative, so
 * no nesting depth can exhaust the stack.
 */
export function unsafeTextPath(value: unknown): string[] | null {
  // Each entry points at its parent instead of copying the path, so a deep body costs linear time.
  interface At {
    key: string;
    parent: At | null;
  }
  const pathOf = (at: At | null, key?: string) => {
    const out: string[] = key === undefined ? [] : [key];
    for (let a = at; a; a = a.parent) out.push(a.key);
    return out.reverse();
  };
  const stack: { v: unknown; at: At | null }[] = [{ v: value, at: null }];
  while (stack.length > 0) {
    const { v, at } = stack.pop()!;
    if (typeof v === "string") {
      if (UNSAFE_TEXT.test(v)) return pathOf(at);
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => {
        stack.push({ v: item, at: { key: String(i), parent: at } });
      });
    } else if (v !== null && typeof v === "object") {
      for (const [key, item] of Object.entries(v)) {
        if (UNSAFE_TEXT.test(key)) return pathOf(at, key);
        stack.push({ v: item, at: { key, parent: at } });
      }
    }
  }
  return null;
}

export const jsonBody: MiddlewareHandler<AppEnv>[] = [readJsonBody];
