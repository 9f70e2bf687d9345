import { Hono } from "hono";
import { notFound } from "../../../domain/errors.ts";
import type { HttpDeps } from "../env.ts";
import { problemFromError } from "../problem.ts";
import { type PageRoutes, pageContext } from "./context.ts";
import type { ConsoleDeps, ConsoleEnv, Mode } from "./env.ts";
import { catalogRoutes } from "./pages/catalog.ts";
import { deliveryRoutes } from "./pages/deliveries.ts";
import { endpointRoutes } from "./pages/endpoint.ts";
import { eventRoutes } from "./pages/event.ts";
import { liveRoutes } from "./pages/live.ts";
import { overviewRoutes } from "./pages/overview.ts";
import { privacyRoutes } from "./pages/privacy.ts";
import { refused, sessionRoutes, signedOut } from "./pages/session.ts";
import { BASE, requireCsrf, requireSession } from "./security.ts";

/** The pages of the console (mode "console"), and those of them the customer portal has (mode "portal"). */
const PAGES: Record<Mode, PageRoutes[]> = {
  console: [
    sessionRoutes,
    overviewRoutes,
    endpointRoutes,
    deliveryRoutes,
    eventRoutes,
    liveRoutes,
    catalogRoutes,
    privacyRoutes,
  ],
  portal: [sessionRoutes, overviewRoutes, endpointRoutes, deliveryRoutes, eventRoutes, liveRoutes],
};

/** The console's (or the portal's) router: a session and, for a change, the CSRF checks; then the pages. */
export function consoleRoutes(mode: Mode, deps: HttpDeps, cd: ConsoleDeps): Hono<ConsoleEnv> {
  const r = new Hono<ConsoleEnv>();
  const p = pageContext(mode, deps, cd);
  // A store that fails outside a page's own handling (the session's read, the CSRF check) is still a
  // page: a database out of reach is told calmly (503), anything else goes on to the app's handler.
  r.onError((e, c) => {
    if (problemFromError(e)?.code === "unavailable") return p.renderError(c, e);
    throw e;
  });
  r.use("*", requireSession(cd.use, mode, signedOut(mode, BASE[mode])));
  r.use("*", requireCsrf(refused(mode, BASE[mode])));
  for (const register of PAGES[mode]) register(r, p);
  // Any other address under the console: a page in its own words, not the API's problem document.
  r.all("*", (c) => p.renderError(c, notFound("This page")));
  return r;
}
