import type { Context } from "hono";
import type { PageRoutes } from "../context.ts";
import type { ConsoleEnv, Mode } from "../env.ts";
import { clearSessionCookie, crossSiteReason } from "../security.ts";
import { page } from "../view.ts";
import { messagePage } from "./message.ts";

/** The answer to a request without a live session: sign in again (console), or the link is gone (portal). */
export function signedOut(mode: Mode, base: string) {
  return (c: Context<ConsoleEnv>): Response | Promise<Response> => {
    // A change posted from another site carries no cookie (SameSite): it is a forgery, not an ended session.
    const forged = c.req.method === "GET" ? null : crossSiteReason(c);
    if (forged) return refused(mode, base)(c, forged);
    if (mode === "console") {
      if (c.req.method === "GET" && !c.req.path.endsWith("/stream"))
        return c.redirect("/console/sign-in", 303);
      return c.html(
        page(
          { title: "Signed out", mode, base },
          messagePage("You are signed out", "Your session has ended. Sign in again to continue.", {
            href: "/console/sign-in",
            label: "Sign in",
          }),
        ),
        401,
      );
    }
    return c.html(
      page(
        { title: "Link expired", mode, base },
        messagePage(
          "This link has expired or was revoked",
          "Portal links work for a limited time. Ask for a new link from the service that sent you here.",
        ),
      ),
      401,
    );
  };
}

/** The answer to a state change refused by the CSRF checks. */
export function refused(mode: Mode, base: string) {
  return (c: Context<ConsoleEnv>, reason: string): Response | Promise<Response> =>
    c.html(
      page(
        { title: "Refused", mode, base },
        messagePage("Request refused", `Herald refused this change because ${reason}.`, {
          href: base,
          label: "Back to the overview",
        }),
      ),
      403,
    );
}

/** POST /sign-out: revokes the session at once. */
export const sessionRoutes: PageRoutes = (r, p) => {
  r.post("/sign-out", async (c) => {
    await p.cd.use.signOut(c.var.session);
    clearSessionCookie(c, p.mode);
    // Post/Redirect/Get: the portal's "signed out" is a page of its own (index.ts), with no session needed.
    return c.redirect(p.mode === "portal" ? "/portal/signed-out" : "/console/sign-in", 303);
  });
};
