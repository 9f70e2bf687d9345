import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { Logger } from "../../app/logger.ts";
import { StoreUnavailableError } from "../../app/ports/store.ts";
import { DomainError, type ValidationIssue } from "../../domain/errors.ts";
import { issueMessage } from "./wording.ts";

/**
 * Every error answer is RFC 9457 problem+json. `type` is `https://herald.dev/problems/<code>`: a stable
 * identifier per code (the same code always has the same type), not necessarily a page to fetch.
 */
export const PROBLEM_TYPE_BASE = "https://herald.dev/problems/";
export const PROBLEM_CONTENT_TYPE = "application/problem+json";
/** Seconds a client is asked to wait after a 503 (database unreachable). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

export const PROBLEM_CODES = [
  "invalid_json",
  "unauthorized",
  "not_found",
  "method_not_allowed",
  "conflict",
  "endpoint_disabled",
  "payload_too_large",
  "unsupported_media_type",
  "validation_failed",
  "rate_limited",
  "internal",
  "unavailable",
] as const;
export type ProblemCode = (typeof PROBLEM_CODES)[number];

const PROBLEMS: Record<ProblemCode, { status: number; title: string }> = {
  invalid_json: { status: 400, title: "Invalid JSON" },
  unauthorized: { status: 401, title: "Unauthorized" },
  not_found: { status: 404, title: "Not Found" },
  method_not_allowed: { status: 405, title: "Method Not Allowed" },
  conflict: { status: 409, title: "Conflict" },
  endpoint_disabled: { status: 409, title: "Endpoint Disabled" },
  payload_too_large: { status: 413, title: "Payload Too Large" },
  unsupported_media_type: { status: 415, title: "Unsupported Media Type" },
  validation_failed: { status: 422, title: "Validation Failed" },
  rate_limited: { status: 429, title: "Too Many Requests" },
  internal: { status: 500, title: "Internal Server Error" },
  unavailable: { status: 503, title: "Service Unavailable" },
};

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  request_id: string;
  errors?: ValidationIssue[];
}

/** A problem to answer with: the code, a human detail, and (validation) the issues. */
export interface Problem {
  code: ProblemCode;
  detail: string;
  errors?: ValidationIssue[];
  headers?: Record<string, string>;
}

/** The problem+json response for a problem. */
/** The HTTP status a problem code answers with (the console renders problems as pages, not JSON). */
export function statusOf(code: ProblemCode): number {
  return PROBLEMS[code].status;
}

export function problemResponse(problem: Problem, requestId: string): Response {
  const { status, title } = PROBLEMS[problem.code];
  const body: ProblemBody = {
    type: `${PROBLEM_TYPE_BASE}${problem.code}`,
    title,
    status,
    detail: problem.detail,
    code: problem.code,
    request_id: requestId,
  };
  // Issues arrive as a path and a predicate ("must use https://"); the answer names the field in front.
  if (problem.code === "validation_failed") {
    body.errors = (problem.errors ?? []).map((i) => ({
      path: i.path,
      message: issueMessage(i.path, i.message),
    }));
  }
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": PROBLEM_CONTENT_TYPE, ...problem.headers },
  });
}

/** Answers a problem from inside a handler or middleware. */
export function respondProblem(c: Context, problem: Problem): Response {
  return problemResponse(problem, c.get("requestId") ?? "unknown");
}

const UNAVAILABLE: Problem = {
  code: "unavailable",
  detail: "The service cannot reach its database right now; try again shortly.",
  headers: { "Retry-After": String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
};

// Driver errors that mean "the database cannot be reached", in case an adapter lets one through unwrapped.
const UNREACHABLE_NAMES = new Set([
  "StoreUnavailableError",
  "MongoServerSelectionError",
  "MongoNetworkError",
  "MongoNetworkTimeoutError",
  "MongoTopologyClosedError",
  "MongoNotConnectedError",
  "MongoPoolClearedError",
  "MongoServerClosedError",
]);

/** True when the error (or one of its causes) says the database is unreachable. */
export function isStoreUnavailable(error: unknown): boolean {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    if (e instanceof StoreUnavailableError || UNREACHABLE_NAMES.has(e.name)) return true;
    e = e.cause;
  }
  return false;
}

/** Maps a use-case failure to its problem; null for an unexpected error (a bug: 500). */
export function problemFromError(error: unknown): Problem | null {
  if (error instanceof DomainError) {
    switch (error.kind) {
      case "validation_failed":
        return { code: "validation_failed", detail: error.message, errors: error.issues };
      case "not_found":
        return { code: "not_found", detail: error.message };
      case "conflict":
        return { code: "conflict", detail: error.message };
      case "endpoint_disabled":
        return { code: "endpoint_disabled", detail: error.message };
      case "unauthorized":
        return { code: "unauthorized", detail: error.message };
      case "rate_limited":
        return { code: "rate_limited", detail: error.message, headers: { "Retry-After": "1" } };
      case "unavailable":
        // The route's own reason (readiness: recording is behind; liveness: a wedged client).
        return { ...UNAVAILABLE, detail: error.message || UNAVAILABLE.detail };
    }
  }
  if (isStoreUnavailable(error)) return UNAVAILABLE;
  if (error instanceof HTTPException) {
    // Raised by hono or zod-openapi middleware; their messages are replaced by ours.
    switch (error.status) {
      case 400:
        return { code: "invalid_json", detail: "The request body is not valid JSON." };
      case 401:
        return { code: "unauthorized", detail: "A valid bearer token is required." };
      case 404:
        return { code: "not_found", detail: "No resource exists at this path." };
      case 413:
        return { code: "payload_too_large", detail: "The request body is larger than 256 KiB." };
      case 415:
        return { code: "unsupported_media_type", detail: "Send the request body as application/json." };
    }
  }
  return null;
}

/**
 * The log line of a 503: "database unavailable" when the store could not be reached, otherwise the
 * route's own reason (readiness behind, a stream refused while stopping), which is no database's fault.
 */
export function logUnavailable(logger: Logger, error: unknown, problem: Problem): void {
  if (isStoreUnavailable(error)) logger.warn("database unavailable", { error });
  else logger.warn("service unavailable", { detail: problem.detail });
}

/** The answer for an unexpected error: generic, with the request id to quote to an operator. */
export function internalProblem(requestId: string): Problem {
  return {
    code: "internal",
    detail: `An unexpected error occurred. Quote request id ${requestId} when reporting it.`,
  };
}

/** Prefixes the paths of a validation error's issues (use cases name fields; the edge adds `body.`). */
export function withIssuePrefix(error: unknown, prefix: string): unknown {
  if (error instanceof DomainError && error.kind === "validation_failed") {
    return new DomainError(
      error.kind,
      error.message,
      error.issues.map((i) => ({ path: i.path ? `${prefix}.${i.path}` : prefix, message: i.message })),
    );
  }
  return error;
}
