import { createRoute, type z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { PublishOutcome } from "../../../../app/events.ts";
import { DomainError, invalid } from "../../../../domain/errors.ts";
import type { AppEnv, HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses } from "../../errors.ts";
import { jsonBody } from "../../middleware/json-body.ts";
import {
  internalProblem,
  logUnavailable,
  type ProblemBody,
  problemFromError,
  problemResponse,
  withIssuePrefix,
} from "../../problem.ts";
import { schemaIssues } from "../../validation.ts";
import { BatchEventSchema, BatchResultSchema, PublishBatchSchema } from "./schema.ts";

export const route = createRoute({
  method: "post",
  path: "/events/batch",
  operationId: "publishEvents",
  tags: ["Events"],
  summary: "Publish a batch of events",
  description:
    "Publishes 1 to 100 events in one request, each exactly as `POST /events` would (validated, stored durably, fanned out), with its own optional `idempotency_key`. The events are written together, in as few writes as the database allows. The answer is 200 with one result per event, in order: `{status: 202, event, replayed}` for an event stored (or replayed), `{status, problem}` with the problem `POST /events` would have answered for one that was not. One bad event does not fail the others; a batch whose body is not `{events: [...]}` with 1 to 100 items is refused whole (422), and so is an `Idempotency-Key` header (each event takes its own `idempotency_key`). The batch spends one request of the publishing rate limit.",
  security: BEARER_AUTH,
  middleware: jsonBody,
  request: {
    body: { required: true, content: { "application/json": { schema: PublishBatchSchema } } },
  },
  responses: {
    200: {
      description:
        "Every event was handled; each result says whether it was stored (202) or why not (its problem).",
      content: { "application/json": { schema: BatchResultSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS),
  },
});

type Result = z.infer<typeof BatchResultSchema>["data"][number];

/** An event's failure as the problem body POST /events would have answered with (issue paths in full). */
async function failure(c: Context<AppEnv>, error: unknown): Promise<Result> {
  const requestId = c.get("requestId") ?? "unknown";
  let problem = problemFromError(error);
  if (!problem) {
    c.var.logger.error("unhandled error", { error, stack: error instanceof Error ? error.stack : undefined });
    problem = internalProblem(requestId);
  } else if (problem.code === "unavailable") {
    logUnavailable(c.var.logger, error, problem);
  }
  const response = problemResponse(problem, requestId);
  return { status: response.status, problem: (await response.json()) as ProblemBody };
}

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const { events } = c.req.valid("json");
    // A key for the whole batch would promise what it cannot keep (a repeat with some events changed):
    // refused rather than ignored, so a client that sends one learns where keys go.
    if (c.req.header("idempotency-key") !== undefined) {
      throw invalid([
        {
          path: "header.idempotency-key",
          message: "is not taken by a batch: give each event its own idempotency_key",
        },
      ]);
    }
    const at = (i: number) => `body.events.${i}`;
    const checked = events.map((item, i) => {
      const r = BatchEventSchema.safeParse(item);
      if (r.success) return r.data;
      return new DomainError(
        "validation_failed",
        "The event is not valid.",
        schemaIssues(at(i), r.error.issues),
      );
    });
    const valid = checked.flatMap((e, i) => (e instanceof DomainError ? [] : [{ i, e }]));
    const outcomes = await deps.events.publishMany(
      c.var.scope,
      valid.map(({ e }) => ({
        type: e.type,
        data: e.data,
        resourceId: e.resource_id,
        occurredAt: e.occurred_at,
        idempotencyKey: e.idempotency_key,
        // One traceparent for the request: each event's publish span is its child (ADR 24).
        traceparent: c.req.header("traceparent"),
      })),
    );
    const byIndex = new Map<number, PublishOutcome>(valid.map(({ i }, k) => [i, outcomes[k]!]));
    const data = await Promise.all(
      checked.map(async (e, i): Promise<Result> => {
        if (e instanceof DomainError) return failure(c, e);
        const outcome = byIndex.get(i)!;
        if ("error" in outcome) return failure(c, withIssuePrefix(outcome.error, at(i)));
        const { envelope, endpoints, replayed } = outcome.ok;
        return { status: 202, event: { ...envelope, endpoints }, replayed };
      }),
    );
    return c.json({ data }, 200);
  });
}
