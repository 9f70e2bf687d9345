import type { SendError } from "../../domain/delivery.ts";
import { BLOCKED_ADDRESS_CODE } from "./guarded-lookup.ts";

type Failure = Exclude<SendError, "http_status" | "redirect">;

const TIMEOUT_CODES = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ETIMEDOUT",
  "ETIMEOUT",
  "EPROXYTIMEOUT", // the egress proxy did not open the tunnel in time, or answered CONNECT with 504
]);
const DNS_CODES = new Set([
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
  "EAI_NONAME",
  "EAI_NODATA",
  "EAI_ADDRFAMILY",
  "ENODATA",
  "ESERVFAIL",
  "ENONAME",
  "EREFUSED",
  "DNSException",
]);
const TLS_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "HOSTNAME_MISMATCH",
  "EPROTO",
]);
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "ENETDOWN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "ConnectionRefused",
  "ConnectionClosed",
  "EPROXYREFUSED", // the egress proxy answered CONNECT with 403, 407, 502, ...
]);
const TLS_CODE_PREFIXES = ["ERR_TLS_", "ERR_SSL_", "ERR_OSSL_", "CERT_", "UNABLE_TO_", "TLS", "ERR_CERT"];
const TLS_MESSAGE = /certificate|\btls\b|\bssl\b|handshake|UnknownIssuer|NotValidForName/i;
const DNS_MESSAGE = /dns error|failed to lookup address|name or service not known|name resolution/i;
const TIMEOUT_MESSAGE = /timed? ?out/i;

/** The error and everything it wraps (cause chains, AggregateError members), outermost first. */
function* chain(err: unknown, depth = 0): Generator<unknown> {
  if (err === undefined || err === null || depth > 8) return;
  yield err;
  if (typeof err !== "object") return;
  const e = err as { cause?: unknown; errors?: unknown };
  if (Array.isArray(e.errors)) for (const inner of e.errors) yield* chain(inner, depth + 1);
  yield* chain(e.cause, depth + 1);
}

function field(err: unknown, key: "code" | "name" | "message"): string {
  if (typeof err !== "object" || err === null) return "";
  const v = (err as Record<string, unknown>)[key];
  return typeof v === "string" ? v : "";
}

/**
 * Names a failed attempt that got no HTTP answer. Codes come from Node/undici, Bun and Deno; the
 * message is only consulted when no error in the chain carries a code we know.
 */
export function classifyFailure(err: unknown): Failure {
  const errors = [...chain(err)];
  for (const e of errors) {
    const code = field(e, "code");
    if (code === BLOCKED_ADDRESS_CODE) return "blocked_address";
  }
  for (const e of errors) {
    const code = field(e, "code");
    const name = field(e, "name");
    if (name === "TimeoutError" || TIMEOUT_CODES.has(code)) return "timeout";
    if (DNS_CODES.has(code)) return "dns_error";
    if (TLS_CODES.has(code) || TLS_CODE_PREFIXES.some((p) => code.startsWith(p))) return "tls_error";
    if (CONNECTION_CODES.has(code)) return "connection_error";
  }
  const messages = errors.map((e) => field(e, "message")).join(" | ");
  if (TLS_MESSAGE.test(messages)) return "tls_error";
  if (DNS_MESSAGE.test(messages)) return "dns_error";
  if (TIMEOUT_MESSAGE.test(messages)) return "timeout";
  return "connection_error";
}
