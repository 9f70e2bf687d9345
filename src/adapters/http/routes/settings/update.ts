import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, BODY_ERRORS, errorResponses } from "../../errors.ts";
import { jsonBody } from "../../middleware/json-body.ts";
import { withIssuePrefix } from "../../problem.ts";
import { presentSettings, SettingsSchema, UpdateSettingsSchema } from "./schema.ts";

export const route = createRoute({
  method: "patch",
  path: "/settings",
  operationId: "updateSettings",
  tags: ["Privacy"],
  summary: "Change the project's settings",
  description:
    "Sets the project's own retention: its events, finished delivery records and erasure records older than this are deleted by the hourly retention job. It may be shorter than the server's HERALD_RETENTION, never longer (422). Absent fields stay as they are.",
  security: BEARER_AUTH,
  middleware: jsonBody,
  request: {
    body: { required: true, content: { "application/json": { schema: UpdateSettingsSchema } } },
  },
  responses: {
    200: {
      description: "The settings as they now are.",
      content: { "application/json": { schema: SettingsSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, ...BODY_ERRORS),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const view = await deps.settings
      .update(c.var.scope, { retention: body.retention })
      .catch((e: unknown) => Promise.reject(withIssuePrefix(e, "body")));
    return c.json(presentSettings(view), 200);
  });
}
