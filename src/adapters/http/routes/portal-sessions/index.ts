import type { HttpApp, HttpDeps } from "../../env.ts";
import * as create from "./create.ts";
import * as revoke from "./revoke.ts";

/** POST /portal-sessions and DELETE /portal-sessions/{id}. */
export function register(app: HttpApp, deps: HttpDeps): void {
  create.register(app, deps);
  revoke.register(app, deps);
}
