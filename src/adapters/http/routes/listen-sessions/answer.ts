import { createRoute } from "@hono/zod-openapi";
import { notFound } from "../../../../domain/errors.ts";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses } from "../../errors.ts";
import { jsonBody } from "../../middleware/json-body.ts";
import { ListenAnswerSchema, ListenSessionIdParams } from "./schema.ts";
import { ownerOf, sessionOf } from "./session.ts";

export const route = createRoute({
  method: "post",
  path: "/listen-sessions/{id}/answers",
  operationId: "answerListenDelivery",
  tags: ["Listen sessions"],
  summary: "Answer a delivery of a listen session",
  description:
    "The response to one `delivery` event of the session's stream: the attempt is recorded with this status and body (2xx succeeds; anything else fails and is retried). 404 when no such delivery waits here: it was answered already, timed out, or its stream is held by another process.",
  security: BEARER_AUTH,
  middleware: jsonBody,
  request: {
    params: ListenSessionIdParams,
    body: { required: true, content: { "application/json": { schema: ListenAnswerSchema } } },
  },
  responses: {
    204: { description: "Recorded as the attempt's response." },
    ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS, 404, 409),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const { message_id, status, body } = c.req.valid("json");
    const { listen, session } = await sessionOf(deps, c.var.scope, id);
    const answered = listen.answer(session, ownerOf(c.var.scope), message_id.toLowerCase(), {
      status,
      body: body ?? null,
    });
    if (!answered) throw notFound("A delivery waiting for this answer");
    return c.body(null, 204);
  });
}
