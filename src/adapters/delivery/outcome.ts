import type { DeliveryRequest } from "../../app/ports/sending.ts";
import { parseRetryAfter } from "../../domain/backoff.ts";
import { RESPONSE_BODY_LIMIT, type SendError, type SendOutcome } from "../../domain/delivery.ts";
import type { HmacSha256 } from "../../domain/hmac.ts";
import { type HeaderPairs, signedHeaders } from "../../domain/signature-scheme.ts";
import { classifyFailure } from "./classify.ts";
import type { DeadlineQueue } from "./deadlines.ts";

/**
 * The headers of a delivery: Content-Type and User-Agent, the scheme's id, timestamp and signature
 * (`signed`), the attempt's `traceparent` when tracing is on (ADR 24), then the endpoint's custom headers
 * (whose names never collide with ours: they are refused when registered).
 */
export function deliveryHeaderFields(
  req: DeliveryRequest,
  userAgent: string,
  signed: HeaderPairs,
): Record<string, string> {
  const fields: Record<string, string> = { "Content-Type": "application/json", "User-Agent": userAgent };
  for (const [name, value] of signed) fields[name] = value;
  if (req.traceparent !== undefined) fields.traceparent = req.traceparent;
  for (const [name, value] of req.headers) fields[name] = value;
  return fields;
}

/** The same, signed by `hmac` (the domain's Web Crypto one unless a runtime offers a faster one). */
export async function deliveryHeaders(
  req: DeliveryRequest,
  userAgent: string,
  hmac?: HmacSha256,
): Promise<Record<string, string>> {
  return deliveryHeaderFields(req, userAgent, await signedHeaders(req, hmac));
}

/**
 * Keeps the first `limit` bytes of a response body. The caller stops reading once `push` answers
 * true: leaving a for-await loop early destroys a Node stream or cancels a web stream, so a huge or
 * endless body costs no more than the limit. What was kept stays readable after a failure.
 */
export class BodyPrefix {
  private readonly buf: Uint8Array;
  private size = 0;
  truncated = false;
  private readonly limit: number;

  constructor(limit = RESPONSE_BODY_LIMIT) {
    this.limit = limit;
    this.buf = new Uint8Array(limit);
  }

  /** Adds a chunk; true when the limit is reached and the rest should not be read. */
  push(chunk: Uint8Array): boolean {
    const take = Math.min(chunk.byteLength, this.limit - this.size);
    this.buf.set(chunk.subarray(0, take), this.size);
    this.size += take;
    if (take < chunk.byteLength) this.truncated = true;
    return this.size >= this.limit;
  }

  /** The kept bytes as text; invalid UTF-8 becomes U+FFFD, a character cut at the limit is dropped. */
  text(): string {
    return decode(this.buf.subarray(0, this.size), this.size >= this.limit);
  }
}

function decode(bytes: Uint8Array, truncated: boolean): string {
  // stream: true keeps an incomplete trailing sequence back instead of emitting U+FFFD for it.
  return new TextDecoder("utf-8", { fatal: false }).decode(bytes, { stream: truncated });
}

/** The outcome of an attempt that got an HTTP answer. */
export function responseOutcome(input: {
  status: number;
  retryAfter: string | null;
  body: string;
  durationMs: number;
  now: Date;
}): SendOutcome {
  const { status } = input;
  const ok = status >= 200 && status < 300;
  const error: SendError | null = ok ? null : status >= 300 && status < 400 ? "redirect" : "http_status";
  const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(input.retryAfter, input.now) : null;
  return {
    ok,
    responseStatus: status,
    responseBody: input.body,
    error,
    durationMs: input.durationMs,
    retryAfterMs,
  };
}

/** The outcome of an attempt that failed before a complete answer, keeping what was seen. */
export function failureOutcome(
  error: SendError,
  durationMs: number,
  seen: { status?: number | null; body?: string | null } = {},
): SendOutcome {
  return {
    ok: false,
    responseStatus: seen.status ?? null,
    responseBody: seen.body ?? null,
    error,
    durationMs,
    retryAfterMs: null,
  };
}

/** Milliseconds since `start` (a performance.now() reading), whole. */
export function elapsed(start: number): number {
  return Math.max(0, Math.round(performance.now() - start));
}

/** The endpoint URL when it can be POSTed to (http or https), null otherwise. */
export function deliveryUrl(raw: string): URL | null {
  try {
    const url = new URL(raw);
    return url.protocol === "https:" || url.protocol === "http:" ? url : null;
  } catch {
    return null;
  }
}

/** What one exchange sees while it runs under the deadline; it records status and body as they arrive. */
export interface Exchange {
  signal: AbortSignal;
  /** True once the deadline has passed. */
  timedOut(): boolean;
  status: number | null;
  body: BodyPrefix;
}

/**
 * Runs one delivery exchange under the whole-request deadline, which `deadlines` (shared by every
 * exchange of a sender) enforces. A failure becomes an outcome: `timeout` when the deadline cut it
 * short, otherwise its classified error, keeping whatever status and body arrived.
 */
export async function underDeadline(
  deadlines: DeadlineQueue,
  start: number,
  exchange: (x: Exchange) => Promise<SendOutcome>,
): Promise<SendOutcome> {
  const controller = new AbortController();
  let timedOut = false;
  const deadline = deadlines.watch(() => {
    timedOut = true;
    controller.abort(new DOMException("delivery timed out", "TimeoutError"));
  });
  const x: Exchange = {
    signal: controller.signal,
    timedOut: () => timedOut,
    status: null,
    body: new BodyPrefix(),
  };
  try {
    return await exchange(x);
  } catch (err) {
    const error = timedOut ? "timeout" : classifyFailure(err);
    return failureOutcome(error, elapsed(start), {
      status: x.status,
      body: x.status === null ? null : x.body.text(),
    });
  } finally {
    deadline.settle();
  }
}
