import type { MiddlewareHandler } from "hono";
import type { TokenUseCases } from "../../../app/tokens.ts";
import type { AppEnv } from "../env.ts";
import { respondProblem } from "../problem.ts";

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** The token of an `Authorization: Bearer <token>` header; undefined for anything else. */
export function bearerToken(header: string | undefined): string | undefined {
  return header ? BEARER.exec(header)?.[1] : undefined;
}

/** Resolves `Authorization: Bearer <token>` to the token's scope; anything else answers 401. */
export function bearerAuth(tokens: TokenUseCases): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header("Authorization");
    const token = bearerToken(header);
    const scope = token ? await tokens.authenticate(token) : null;
    if (!scope) {
      return respondProblem(c, {
        code: "unauthorized",
        detail: header
          ? "The bearer token is malformed, unknown or revoked."
          : "Send Authorization: Bearer <token>.",
        headers: { "WWW-Authenticate": 'Bearer realm="herald"' },
      });
    }
    c.set("scope", scope);
    return next();
  };
}
