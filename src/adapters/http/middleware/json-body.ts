import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../env.ts";
import { respondProblem } from "../problem.ts";

/** Largest request body accepted: 256 KiB. */
export const MAX_BODY_BYTES = 256 * 1024;
const JSON_MEDIA_TYPE = /^application\/([\w.+-]+\+)?json\s*(;.*)?$/i;

const limit = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  // The rest of the body is never read, so the connection cannot carry another request: close it.
  onError: (c) =>
    respondProblem(c, {
      code: "payload_too_large",
      detail: "The request body is larger than 256 KiB.",
      headers: { Connection: "close" },
    }),
});

/**
 * Checks a request body before schema validation: a body must be application/json (415) and parse (400).
 * An empty body counts as no body, so optional bodies may be left out whatever the Content-Type says.
 */
const parseJson: MiddlewareHandler<AppEnv> = async (c, next) => {
  const text = await c.req.text();
  if (text.length === 0) {
    const headers = new Headers(c.req.raw.headers);
    for (const h of ["content-type", "content-length", "transfer-encoding"]) headers.delete(h);
    c.req.raw = new Request(c.req.raw.url, { method: c.req.method, headers });
    c.req.bodyCache = {};
    return next();
  }
  if (!JSON_MEDIA_TYPE.test(c.req.header("Content-Type") ?? "")) {
    return respondProblem(c, {
      code: "unsupported_media_type",
      detail: "Send the request body as application/json.",
    });
  }
  try {
    JSON.parse(text);
  } catch {
    return respondProblem(c, { code: "invalid_json", detail: "The request body is not valid JSON." });
  }
  // The text stays cached on the request, so the validator parses the same bytes without reading again.
  return next();
};

/** The middleware of every route that takes a JSON body: size limit, media type, JSON syntax. */
export const jsonBody: MiddlewareHandler<AppEnv>[] = [limit, parseJson];
