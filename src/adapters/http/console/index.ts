import { readFileSync } from "node:fs";
import { Hono } from "hono";
import { getCookie } from "hono/cookie";
import type { Scope } from "../../../app/ports/paging.ts";
import type { HttpDeps } from "../env.ts";
import type { ConsoleDeps, ConsoleEnv } from "./env.ts";
import { messagePage, signInPage } from "./pages/message.ts";
import { consoleRoutes } from "./routes.ts";
import { COOKIE, crossSiteReason, securityHeaders, setSessionCookie } from "./security.ts";
import { page } from "./view.ts";

export type { ConsoleDeps } from "./env.ts";

// The console's two static files, hand-written and served as they are: no build step.
const asset = (name: string) => readFileSync(new URL(`./assets/${name}`, import.meta.url), "utf8");
const ASSETS: Record<string, { body: string; type: string }> = {
  "app.css": { body: asset("app.css"), type: "text/css; charset=utf-8" },
  "app.js": { body: asset("app.js"), type: "text/javascript; charset=utf-8" },
};

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** The browser console at /console and the customer portal at /portal, as one Hono app to mount at "/". */
export function consoleApp(deps: HttpDeps, cd: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const { use } = cd;

  app.use("/console/*", securityHeaders("console", cd.portalFrameAncestors));
  app.use("/console", securityHeaders("console", cd.portalFrameAncestors));
  app.use("/portal/*", securityHeaders("portal", cd.portalFrameAncestors));

  app.get("/console/assets/:name", (c) => {
    const a = ASSETS[c.req.param("name")];
    if (!a) return c.text("Not found", 404);
    c.header("Cache-Control", "public, max-age=3600");
    return c.body(a.body, 200, { "Content-Type": a.type });
  });

  app.get("/console/", (c) => c.redirect("/console", 301));
  app.get("/portal/", (c) => c.redirect("/portal", 301));

  const signInFrame = { title: "Sign in", mode: "console" as const, base: "/console" };
  app.get("/console/sign-in", async (c) => {
    const secret = getCookie(c, COOKIE.console);
    if (secret && (await use.authenticate(secret, "console"))) return c.redirect("/console", 303);
    return c.html(page(signInFrame, signInPage()));
  });

  app.post("/console/sign-in", async (c) => {
    // Login CSRF: a sign-in form posted from another site is refused before the token is looked at.
    const reason = crossSiteReason(c);
    if (reason) {
      return c.html(
        page(signInFrame, messagePage("Request refused", `Herald refused this sign-in because ${reason}.`)),
        403,
      );
    }
    const form = await c.req.parseBody();
    const token = typeof form.token === "string" ? form.token : "";
    const issued = token ? await use.signInWithToken(token) : null;
    if (!issued) {
      return c.html(
        page(
          {
            ...signInFrame,
            error:
              "That API token is not valid: it is malformed, unknown or revoked. Check that you pasted all of it (it starts with hrld_).",
          },
          signInPage(),
        ),
        401,
      );
    }
    setSessionCookie(c, "console", issued.secret, issued.record.expiresAt);
    return c.redirect("/console", 303);
  });

  // A one-time link printed by `herald console`: redeemed once, then the browser lands on a clean URL.
  app.get("/console/sign-in/link", async (c) => {
    const code = c.req.query("code") ?? "";
    const issued = /^[A-Za-z0-9_-]{43}$/.test(code) ? await use.redeemSignInCode(code) : null;
    if (!issued) {
      return c.html(
        page(
          signInFrame,
          messagePage(
            "This sign-in link has expired",
            "Sign-in links work once and for five minutes. Run npx herald console again, or sign in with an API token.",
            { href: "/console/sign-in", label: "Sign in with a token" },
          ),
        ),
        401,
      );
    }
    setSessionCookie(c, "console", issued.secret, issued.record.expiresAt);
    return c.redirect("/console", 303);
  });

  // Made by the CLI with an API token (bearer, not a cookie, so no CSRF concern): a one-time sign-in URL.
  app.post("/console/sign-in/links", async (c) => {
    const token = BEARER.exec(c.req.header("authorization") ?? "")?.[1];
    const scope: Scope | null = token ? await deps.tokens.authenticate(token) : null;
    if (!scope) {
      return c.json(
        {
          type: "about:blank",
          title: "Unauthorized",
          status: 401,
          code: "unauthorized",
          detail: "Send Authorization: Bearer <API token>.",
        },
        401,
        { "Content-Type": "application/problem+json" },
      );
    }
    const issued = await use.createSignInCode(scope);
    const origin = new URL(c.req.url).origin;
    return c.json(
      {
        url: `${origin}/console/sign-in/link?code=${issued.secret}`,
        expires_at: issued.record.expiresAt.toISOString(),
      },
      201,
    );
  });

  // A customer portal link: opens a restricted session; the address bar then shows /portal only. The
  // secret is in the query, which the access log never writes (it writes the path).
  app.get("/portal/enter", async (c) => {
    const code = c.req.query("code") ?? "";
    const issued = /^[A-Za-z0-9_-]{43}$/.test(code) ? await use.enterPortal(code) : null;
    if (!issued) {
      return c.html(
        page(
          { title: "Link expired", mode: "portal", base: "/portal" },
          messagePage(
            "This link has expired or was revoked",
            "Portal links work for a limited time. Ask for a new link from the service that sent you here.",
          ),
        ),
        401,
      );
    }
    setSessionCookie(c, "portal", issued.secret, issued.record.expiresAt);
    return c.redirect("/portal", 303);
  });

  app.get("/portal/signed-out", (c) =>
    c.html(
      page(
        { title: "Signed out", mode: "portal", base: "/portal" },
        messagePage("Signed out", "You can close this page."),
      ),
    ),
  );

  app.route("/console", consoleRoutes("console", deps, cd));
  app.route("/portal", consoleRoutes("portal", deps, cd));
  return app;
}
