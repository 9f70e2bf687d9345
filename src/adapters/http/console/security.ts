import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { ConsoleUseCases } from "../../../app/console.ts";
import { timingSafeEqual } from "../../../domain/encoding.ts";
import type { ConsoleEnv, Mode } from "./env.ts";

export const COOKIE: Record<Mode, string> = { console: "herald_console", portal: "herald_portal" };
export const BASE: Record<Mode, string> = { console: "/console", portal: "/portal" };

/** True when the browser reached Herald over HTTPS (directly, or through a proxy that says so). */
export function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https";
}

/**
 * The Content-Security-Policy of every console and portal answer: only Herald's own script, style,
 * images and connections; no inline code. Only portal pages may be framed, by the configured origins.
 */
export function contentSecurityPolicy(mode: Mode, frameAncestors: readonly string[]): string {
  const ancestors = mode === "portal" && frameAncestors.length > 0 ? frameAncestors.join(" ") : "'none'";
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "object-src 'none'",
    `frame-ancestors ${ancestors}`,
  ].join("; ");
}

/** Security headers on every answer under /console and /portal. */
export function securityHeaders(mode: Mode, frameAncestors: readonly string[]): MiddlewareHandler {
  return async (c, next) => {
    await next();
    c.header("Content-Security-Policy", contentSecurityPolicy(mode, frameAncestors));
    c.header("X-Content-Type-Options", "nosniff");
    // same-origin, not no-referrer: with no-referrer, Chromium sends "Origin: null" on form posts.
    c.header("Referrer-Policy", "same-origin");
    c.header("Cross-Origin-Opener-Policy", "same-origin");
    c.header("Cross-Origin-Resource-Policy", "same-origin");
    if (mode === "console" || frameAncestors.length === 0) c.header("X-Frame-Options", "DENY");
    if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", "no-store");
  };
}

/**
 * Sets the session cookie: HttpOnly, SameSite=Strict, Secure over HTTPS, scoped to its path. A portal
 * session over HTTPS is SameSite=None; Secure; Partitioned instead, so it also works inside the iframe
 * of another site (its forms are still guarded by the synchronizer token and the origin checks).
 */
export function setSessionCookie(c: Context, mode: Mode, secret: string, expiresAt: Date): void {
  const https = isHttps(c);
  const embeddable = mode === "portal" && https;
  setCookie(c, COOKIE[mode], secret, {
    path: BASE[mode],
    httpOnly: true,
    secure: https,
    sameSite: embeddable ? "None" : "Strict",
    ...(embeddable ? { partitioned: true } : {}),
    expires: expiresAt,
  });
}

export function clearSessionCookie(c: Context, mode: Mode): void {
  deleteCookie(c, COOKIE[mode], { path: BASE[mode], secure: isHttps(c) });
}

/** Why a state-changing request was refused as cross-site; null when it looks same-origin. */
export function crossSiteReason(c: Context): string | null {
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined && site !== "same-origin" && site !== "none") {
    return `the request came from another site (Sec-Fetch-Site: ${site})`;
  }
  const origin = c.req.header("origin");
  if (origin !== undefined) {
    const host = c.req.header("host") ?? new URL(c.req.url).host;
    let originHost: string | null = null;
    try {
      originHost = origin === "null" ? null : new URL(origin).host;
    } catch {
      originHost = null;
    }
    if (originHost !== host) return "the request came from another origin";
  }
  return null;
}

/** Loads the session from the cookie into c.var.session; without one, `onMissing` answers. */
export function requireSession(
  use: ConsoleUseCases,
  mode: Mode,
  onMissing: (c: Context<ConsoleEnv>) => Response | Promise<Response>,
): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const secret = getCookie(c, COOKIE[mode]);
    const session = secret ? await use.authenticate(secret, mode) : null;
    if (!session) return onMissing(c);
    c.set("session", session);
    return next();
  };
}

/** Refuses a POST that is cross-site or lacks the session's synchronizer token (403). */
export function requireCsrf(
  refuse: (c: Context<ConsoleEnv>, reason: string) => Response | Promise<Response>,
): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    if (c.req.method !== "POST") return next();
    const reason = crossSiteReason(c);
    if (reason) return refuse(c, reason);
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const token = form._csrf;
    if (typeof token !== "string" || !timingSafeEqual(token, c.var.session.csrfToken)) {
      return refuse(c, "the form is stale or was not sent by this console; reload the page and try again");
    }
    return next();
  };
}
