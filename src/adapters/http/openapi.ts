import type { HttpApp } from "./env.ts";
import { PROBLEM_TYPE_BASE } from "./problem.ts";

const DESCRIPTION = `Herald delivers signed webhooks: register endpoints (HTTPS URLs, Kafka topics, RabbitMQ exchanges, SQS queues), publish events, inspect and replay deliveries.

Every \`/api/v1\` call needs \`Authorization: Bearer <token>\` (tokens come from \`herald tokens create\`). A token sees only its own
project: another project's resources answer 404 exactly like missing ones.

Errors are \`application/problem+json\` (RFC 9457) with \`type\`, \`title\`, \`status\`, \`detail\`, a stable \`code\` and the
\`request_id\`; validation errors add \`errors: [{path, message}]\` with paths such as \`body.url\` or \`query.limit\`.
\`type\` is \`${PROBLEM_TYPE_BASE}<code>\`. Under \`/api/v1\` authentication is checked first, so an unauthenticated
call to an unknown path answers 401; an authenticated one answers 404. A known path with a method it does not take answers
405 \`method_not_allowed\` with \`Allow\`. Request bodies refuse fields they do not define (422 naming each one).

Each API token has two budgets, token buckets per process: publishing (\`POST /events\` and \`POST /events/batch\`, policy
\`"publish"\`) may make \`HERALD_PUBLISH_RATE_LIMIT\` requests (default \`1000/s\` in bursts of 2000; a batch is one request),
every other call \`HERALD_RATE_LIMIT\` (default \`100/s\`, policy \`"per-token"\`, a bucket holding one second's worth);
every \`/api/v1\` answer carries \`RateLimit-Policy\` and \`RateLimit\` (draft-ietf-httpapi-ratelimit-headers) for the budget it
spent, and a request over the limit answers 429 \`rate_limited\` with \`Retry-After\`. Health, readiness, metrics and these
documents are not limited.

Free-form \`metadata\` may nest at most 10 levels, hold at most 500 keys and array items in all, with keys of at most
256 and strings of at most 8192 characters; the whole body at most 256 KiB.

Lists are newest first and answer \`{data, next_cursor}\`; pass \`next_cursor\` back as \`cursor\`.`;

/** The OpenAPI 3.1 document of the app's routes (the committed openapi/openapi.json). */
export function openApiDocument(app: HttpApp, version: string) {
  const doc = app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Herald",
      version,
      description: DESCRIPTION,
      license: { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" },
    },
    servers: [{ url: "/", description: "The server that serves this document" }],
    tags: [
      { name: "Webhooks", description: "Registered endpoints and their signing secrets." },
      { name: "Events", description: "Publishing events, which are fanned out to subscribed endpoints." },
      { name: "Deliveries", description: "Delivery attempts: inspect and replay." },
      { name: "Operations", description: "Health, readiness and metrics; no authentication." },
      {
        name: "Receiving",
        description:
          "What Herald posts to an endpoint for each event type (the document's `webhooks`): the signed envelope.",
      },
    ],
  });
  // A creation may leave `kind` out (HTTPS), and a discriminator needs its property present in every
  // variant: generators would make an HTTPS creation name its own schema as its kind. The variants are
  // told apart by their `kind` enums and required objects alone (ADR 27).
  const create = doc.components?.schemas?.CreateWebhookRequest as { discriminator?: unknown } | undefined;
  delete create?.discriminator;
  return doc;
}
