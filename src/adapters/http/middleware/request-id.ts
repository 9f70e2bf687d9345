import type { MiddlewareHandler } from "hono";
import type { Logger } from "../../../app/logger.ts";
import type { AppEnv } from "../env.ts";

export const REQUEST_ID_HEADER = "X-Request-Id";
// A caller's id is kept only when it is short and plain, so it is safe to echo and to log.
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Takes a sane incoming X-Request-Id or makes one; echoes it and gives handlers a logger bound to it. */
export function requestId(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const given = c.req.header(REQUEST_ID_HEADER);
    const id = given && SANE_REQUEST_ID.test(given) ? given : crypto.randomUUID();
    c.set("requestId", id);
    c.set("logger", logger.child({ request_id: id }));
    await next();
    c.res.headers.set(REQUEST_ID_HEADER, id);
  };
}
