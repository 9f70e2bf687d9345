import { createRoute } from "@hono/zod-openapi";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, errorResponses } from "../../errors.ts";
import { presentSettings, SettingsSchema } from "./schema.ts";

export const route = createRoute({
  method: "get",
  path: "/settings",
  operationId: "getSettings",
  tags: ["Privacy"],
  summary: "Get the project's settings",
  security: BEARER_AUTH,
  responses: {
    200: { description: "The settings.", content: { "application/json": { schema: SettingsSchema } } },
    ...errorResponses(...AUTHENTICATED_ERRORS),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => c.json(presentSettings(await deps.settings.get(c.var.scope)), 200));
}
