import { createRoute } from "@hono/zod-openapi";
import { decodeCursor, encodeCursor } from "../../cursor.ts";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, errorResponses } from "../../errors.ts";
import { ErasureListSchema, ListErasuresQuery, presentErasure } from "./schema.ts";

export const route = createRoute({
  method: "get",
  path: "/erasures",
  operationId: "listErasures",
  tags: ["Privacy"],
  summary: "List erasures",
  description: "The project's erasures, newest first.",
  security: BEARER_AUTH,
  request: { query: ListErasuresQuery },
  responses: {
    200: {
      description: "A page of erasures.",
      content: { "application/json": { schema: ErasureListSchema } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, 422),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    const page = await deps.erasures.list(c.var.scope, { limit: q.limit, cursor: decodeCursor(q.cursor) });
    return c.json(
      { data: page.data.map(presentErasure), next_cursor: page.next ? encodeCursor(page.next) : null },
      200,
    );
  });
}
