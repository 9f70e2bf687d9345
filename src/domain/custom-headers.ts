import type { ValidationIssue } from "./errors.ts";

// Custom headers: sent with every delivery to an endpoint (an API key, a routing hint). Their values
// are credentials, so they are sealed at rest and shown only as HEADER_VALUE_MASK (ADR 13).

export const MAX_CUSTOM_HEADERS = 20;
export const MAX_HEADER_NAME_LENGTH = 128;
export const MAX_HEADER_VALUE_LENGTH = 4096;
/** Names and values together, in characters: receivers commonly cap a whole request head at 8-16 KiB. */
export const MAX_CUSTOM_HEADERS_SIZE = 8192;
/** What every answer shows in place of a value: the same for every value, so it reveals nothing of it. */
export const HEADER_VALUE_MASK = "********";

/** RFC 7230 `token`: the characters a header name may have. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Printable ASCII, inner spaces and tabs allowed, none at either end (HTTP would trim them). */
const VALUE = /^[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?$/;

/** Header names Herald sets itself, or that HTTP reserves to the connection or the message framing. */
const RESERVED_NAMES = new Set([
  "user-agent",
  "content-type",
  "content-length",
  "content-encoding",
  "host",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "expect",
  // W3C Trace Context: Herald sends the attempt's own traceparent when tracing is on (ADR 24); a second
  // one, or a fixed one, would break the receiver's trace. Reserved whether or not tracing is on, so an
  // endpoint does not change meaning with a deployment setting.
  "traceparent",
  "tracestate",
]);
/** Herald's own (X-Webhook-*), the Standard Webhooks headers (webhook-*), and hop-by-hop Proxy-*. */
const RESERVED_PREFIXES = ["x-webhook-", "webhook-", "proxy-"];

/** True for a name no custom header may have (compared without regard to case). */
export function isReservedHeaderName(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED_NAMES.has(lower) || RESERVED_PREFIXES.some((p) => lower.startsWith(p));
}

/** A custom header with its value in whatever form the caller holds it (plain, or sealed). */
export interface NamedValue<V> {
  name: string;
  value: V;
}

/**
 * Problems with the headers of a request: names (RFC 7230 tokens, not reserved, unique without regard
 * to case, at most 128 characters) and values (printable ASCII, 1-4096 characters, not the mask).
 * A null value (a change removing that header) is not checked. Messages never quote a value.
 */
export function headerInputIssues(headers: Readonly<Record<string, string | null>>, path = "headers") {
  const issues: ValidationIssue[] = [];
  const seen = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    const at = `${path}.${name}`;
    if (name.length > MAX_HEADER_NAME_LENGTH) {
      issues.push({
        path: at,
        message: `must be a header name of at most ${MAX_HEADER_NAME_LENGTH} characters`,
      });
    } else if (!TOKEN.test(name)) {
      issues.push({
        path: at,
        message: "must be an HTTP header name: letters, digits and !#$%&'*+-.^_`|~ only",
      });
    } else if (isReservedHeaderName(name)) {
      issues.push({
        path: at,
        message:
          "is set by Herald or reserved by HTTP (X-Webhook-*, webhook-*, Content-*, User-Agent, Host, traceparent, tracestate, hop-by-hop headers)",
      });
    } else {
      const other = seen.get(name.toLowerCase());
      if (other !== undefined) {
        issues.push({ path: at, message: `repeats ${other}: header names do not differ by case` });
      }
      seen.set(name.toLowerCase(), name);
    }
    if (value === null) continue;
    if (value.length === 0) issues.push({ path: at, message: "must not be empty" });
    else if (value.length > MAX_HEADER_VALUE_LENGTH) {
      issues.push({ path: at, message: `must be at most ${MAX_HEADER_VALUE_LENGTH} characters long` });
    } else if (value === HEADER_VALUE_MASK) {
      issues.push({
        path: at,
        message: `must be the real value, not the mask ${HEADER_VALUE_MASK} (leave the header out to keep it)`,
      });
    } else if (!VALUE.test(value)) {
      issues.push({
        path: at,
        message: "must be printable ASCII, with no line break and no space at either end",
      });
    }
  }
  return issues;
}

/** Problems with a whole set of headers: how many, and how long all names and values are together. */
export function headerSetIssues(headers: readonly NamedValue<string>[], path = "headers"): ValidationIssue[] {
  if (headers.length > MAX_CUSTOM_HEADERS) {
    return [{ path, message: `must hold at most ${MAX_CUSTOM_HEADERS} headers` }];
  }
  const size = headers.reduce((n, h) => n + h.name.length + h.value.length, 0);
  if (size > MAX_CUSTOM_HEADERS_SIZE) {
    return [
      { path, message: `must be at most ${MAX_CUSTOM_HEADERS_SIZE} characters in all, names and values` },
    ];
  }
  return [];
}

/**
 * The headers after a change, as a JSON merge patch (RFC 7396) would leave them: a value sets the
 * header (replacing one of the same name in any case, taking the new spelling, in its place), null
 * removes it, a name not mentioned stays; a null change removes them all.
 */
export function mergeHeaders<V>(
  current: readonly NamedValue<V>[],
  change: Readonly<Record<string, V | null>> | null,
): NamedValue<V>[] {
  if (change === null) return [];
  const out = current.map((h) => ({ ...h }));
  for (const [name, value] of Object.entries(change)) {
    const at = out.findIndex((h) => h.name.toLowerCase() === name.toLowerCase());
    if (value === null) {
      if (at >= 0) out.splice(at, 1);
    } else if (at >= 0) out[at] = { name, value };
    else out.push({ name, value });
  }
  return out;
}

/** Headers as an answer shows them: each name with the mask in place of its value. */
export function maskedHeaders(
  headers: readonly { name: string }[],
): Record<string, typeof HEADER_VALUE_MASK> {
  // fromEntries defines each name as an own property, whatever the name.
  return Object.fromEntries(headers.map((h) => [h.name, HEADER_VALUE_MASK]));
}
