import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.ts";

/** One line per request: method, path, status, duration. Never headers, query strings or bodies. */
export function accessLog(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    c.get("logger").info("request", {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
    });
  };
}
