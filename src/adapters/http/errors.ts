import { z } from "@hono/zod-openapi";
import {
  PROBLEM_CODES,
  PROBLEM_CONTENT_TYPE,
  PROBLEM_TYPE_BASE,
  UNAVAILABLE_RETRY_AFTER_SECONDS,
} from "./problem.ts";

export const ValidationIssueSchema = z
  .object({
    path: z.string().openapi({ example: "body.url", description: "Where: body.*, query.*, header.*." }),
    message: z.string().openapi({ example: "must use https://" }),
  })
  .openapi("ValidationIssue");

const problemFields = {
  type: z.string().openapi({
    format: "uri",
    example: `${PROBLEM_TYPE_BASE}not_found`,
    description: `${PROBLEM_TYPE_BASE}<code>; stable per code.`,
  }),
  title: z.string().openapi({ example: "Not Found" }),
  status: z.number().int().openapi({ example: 404 }),
  detail: z.string().openapi({ example: "The endpoint was not found." }),
  code: z.enum(PROBLEM_CODES).openapi({ description: "Stable machine-readable code." }),
  request_id: z.string().openapi({ description: "The request's X-Request-Id." }),
};

export const ProblemSchema = z
  .object(problemFields)
  .openapi("Problem", { description: "An RFC 9457 problem document." });

export const ValidationProblemSchema = z
  .object({
    ...problemFields,
    code: z.literal("validation_failed"),
    errors: z.array(ValidationIssueSchema),
  })
  .openapi("ValidationProblem", { description: "A problem document listing every invalid field." });

const problem = (description: string) => ({
  description,
  content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } },
});

const retryAfter = (description: string) => ({
  "Retry-After": { description, schema: { type: "integer" as const } },
});

/** Every error answer the API can give, declared once; routes pick theirs with `errorResponses()`. */
export const ERROR_RESPONSES = {
  400: problem("`invalid_json`: the request body is not JSON."),
  401: problem("`unauthorized`: the bearer token is missing, malformed, unknown or revoked."),
  404: problem("`not_found`: the resource does not exist or belongs to another project."),
  409: problem("`conflict` or `endpoint_disabled`: the resource's state forbids the call."),
  413: problem("`payload_too_large`: the request body is over 256 KiB."),
  415: problem("`unsupported_media_type`: the request body is not `application/json`."),
  422: {
    description: "`validation_failed`: well-formed JSON or parameters that break the schema.",
    content: { [PROBLEM_CONTENT_TYPE]: { schema: ValidationProblemSchema } },
  },
  405: {
    ...problem("`method_not_allowed`: the path exists but does not take this method."),
    headers: {
      Allow: {
        description: "The methods the path takes, e.g. `GET, HEAD, POST`.",
        schema: { type: "string" as const },
      },
    },
  },
  429: {
    ...problem(
      "`rate_limited`: this token has used up its request quota (`HERALD_RATE_LIMIT`, a token bucket per API token); wait `Retry-After` seconds.",
    ),
    headers: {
      ...retryAfter("Seconds until the token may make another request."),
      RateLimit: {
        description:
          'The quota left now (draft-ietf-httpapi-ratelimit-headers): `"per-token";r=<requests left>;t=<seconds until the bucket is full>`. Sent on every /api/v1 answer while limiting is on.',
        schema: { type: "string" as const },
      },
      "RateLimit-Policy": {
        description:
          'The quota policy: `"per-token";q=<burst>;w=<seconds to refill it>`. Sent on every /api/v1 answer while limiting is on.',
        schema: { type: "string" as const },
      },
    },
  },
  500: problem("`internal`: an unexpected error; the detail is generic."),
  503: {
    ...problem("`unavailable`: the database is unreachable."),
    headers: retryAfter(`Seconds to wait before retrying (${UNAVAILABLE_RETRY_AFTER_SECONDS}).`),
  },
} as const;

export type ErrorStatus = keyof typeof ERROR_RESPONSES;

/** The shared error responses for the given statuses, to spread into a route's `responses`. */
export function errorResponses<const S extends readonly ErrorStatus[]>(
  ...statuses: S
): Pick<typeof ERROR_RESPONSES, S[number]> {
  const out: Partial<Record<ErrorStatus, unknown>> = {};
  for (const s of statuses) out[s] = ERROR_RESPONSES[s];
  return out as Pick<typeof ERROR_RESPONSES, S[number]>;
}

/** Errors every authenticated call can answer. */
export const AUTHENTICATED_ERRORS = [401, 429, 500, 503] as const;
/** Errors of a call that takes a JSON body. */
export const BODY_ERRORS = [400, 413, 415, 422] as const;

/** The security requirement of every /api/v1 operation. */
export const BEARER_AUTH = [{ bearerAuth: [] }];
