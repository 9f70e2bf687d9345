import { createRoute, z } from "@hono/zod-openapi";
import { DomainError } from "../../../../domain/errors.ts";
import { listenStream } from "../../../listen/stream.ts";
import type { HttpApp, HttpDeps } from "../../env.ts";
import { AUTHENTICATED_ERRORS, BEARER_AUTH, errorResponses } from "../../errors.ts";
import { respondProblem } from "../../problem.ts";
import { ListenSessionIdParams } from "./schema.ts";
import { ownerOf, sessionOf } from "./session.ts";

export const route = createRoute({
  method: "get",
  path: "/listen-sessions/{id}/stream",
  operationId: "streamListenSession",
  tags: ["Listen sessions"],
  summary: "Receive a listen session's deliveries",
  description: [
    "Server-sent events, for as long as the connection lasts: `ready` once, then a `delivery` per attempt, `data` being `{id, headers, body}` (the signed request's headers and its exact body). Answer each with `POST /listen-sessions/{id}/answers` within the delivery timeout, or the attempt fails (`timeout`) and is retried; while no stream is open, attempts fail at once (`connection_error`).",
    "A session has one stream at a time: a second answers 409. The stream, its answers and the delivering process must be the same Herald process (see ADR 29).",
  ].join("\n\n"),
  security: BEARER_AUTH,
  request: { params: ListenSessionIdParams },
  responses: {
    200: {
      description: "The event stream.",
      content: { "text/event-stream": { schema: z.string() } },
    },
    ...errorResponses(...AUTHENTICATED_ERRORS, 404, 409),
  },
});

export function register(app: HttpApp, deps: HttpDeps): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const { listen, session } = await sessionOf(deps, c.var.scope, id);
    const body = listenStream(listen, session, ownerOf(c.var.scope), { webhook_id: id });
    // A stream opened while Herald stops would hold its server open: the CLI tries again later, on a new
    // connection (a reused one would never be idle, and the server's close would wait for it).
    if (listen.isClosed()) {
      return respondProblem(c, {
        code: "unavailable",
        detail: "Herald is stopping; try again shortly.",
        headers: { "Retry-After": "1", Connection: "close" },
      }) as never;
    }
    if (!body)
      throw new DomainError("conflict", "Another herald listen is receiving this session's deliveries.");
    c.var.logger.info("listen session opened", { webhook_id: id });
    return new Response(body, {
      status: 200,
      headers: {
        "Content-Type": "text/event-stream; charset=utf-8",
        "Cache-Control": "no-store",
        "X-Accel-Buffering": "no",
        // The connection ends with the stream (Herald stopping), so the server's close does not wait for it.
        Connection: "close",
        "X-Request-Id": c.get("requestId") ?? "",
      },
    }) as never;
  });
}
