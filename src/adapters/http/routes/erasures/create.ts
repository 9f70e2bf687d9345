import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses } from "../../errors.ts";
import { jsonBody } from "../../middleware/json-body.ts";
import { withIssuePrefix } from "../../problem.ts";
import { CreateErasureDocument, CreateErasureSchema, ErasureSchema, presentErasure } from "./schema.ts";

export const route = createRoute({
  method: "post",
  path: "/erasures",
  operationId: "createErasure",
  tags: ["Privacy"],
  summary: "Erase a subject's events",
  description:
    "Removes every stored event of the token's project about one subject (a `resource_id`, or a `data.recipient`), and erases their delivery records: each gets `erased_at`, loses its `response_body`, and keeps its outcome; a record still pending is cancelled and never sent. The erasure is done when this answers (202 with the counts); it is safe to repeat, and repeating it after a failure finishes it. An erased event is not found by GET /events/{id}, is never sent again (a retry answers 409 `conflict`), and does not come back after a restart.",
  security: BEARER_AUTH,
  middleware: jsonBody,
  request: {
    body: { required: true, content: { "application/json": { schema: CreateErasureSchema } } },
  },
  responses: {
    202: {
      description: "Erased: what was removed, under the erasure's id.",
      content: { "application/json": { schema: ErasureSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  // The body is named by reference only (see documentedAs), so its component is registered here.
  app.openAPIRegistry.register("CreateErasureRequest", CreateErasureDocument);
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const record = await deps.erasures
      .create(c.var.scope, { resourceId: body.resource_id, recipient: body.recipient })
      .catch((e: unknown) => Promise.reject(withIssuePrefix(e, "body")));
    return c.json(presentErasure(record), 202);
  });
}
