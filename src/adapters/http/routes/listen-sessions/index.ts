import type { HttpApp, HttpDeps } from "../../env.ts";
import * as answer from "./answer.ts";
import * as create from "./create.ts";
import * as stream from "./stream.ts";

/** POST /listen-sessions, GET /listen-sessions/{id}/stream, POST /listen-sessions/{id}/answers (ADR 29). */
export function register(app: HttpApp, deps: HttpDeps): void {
  create.register(app, deps);
  stream.register(app, deps);
  answer.register(app, deps);
}
