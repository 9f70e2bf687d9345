import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { consoleApp } from "./console/index.ts";
import { registerDocs } from "./docs.ts";
import type { AppEnv, HttpApp, HttpDeps } from "./env.ts";
import { allowedMethodsOf } from "./method-not-allowed.ts";
import { accessLog } from "./middleware/access-log.ts";
import { bearerAuth } from "./middleware/auth.ts";
import { requestId } from "./middleware/request-id.ts";
import { openApiDocument } from "./openapi.ts";
import { internalProblem, logUnavailable, problemFromError, respondProblem } from "./problem.ts";
import { PUBLISH_RATE_LIMIT_POLICY_NAME, RATE_LIMIT_POLICY_NAME, rateLimit } from "./rate-limit.ts";
import * as getDelivery from "./routes/deliveries/get.ts";
import * as listDeliveries from "./routes/deliveries/list.ts";
import * as retryDelivery from "./routes/deliveries/retry.ts";
import * as createErasure from "./routes/erasures/create.ts";
import * as getErasure from "./routes/erasures/get.ts";
import * as listErasures from "./routes/erasures/list.ts";
import * as getEvent from "./routes/events/get.ts";
import { registerEventWebhooks } from "./routes/events/payloads.ts";
import * as publishEvent from "./routes/events/publish.ts";
import * as publishEvents from "./routes/events/publish-batch.ts";
import * as listenSessions from "./routes/listen-sessions/index.ts";
import * as healthz from "./routes/operations/healthz.ts";
import * as metrics from "./routes/operations/metrics.ts";
import * as readyz from "./routes/operations/readyz.ts";
import * as portalSessions from "./routes/portal-sessions/index.ts";
import * as getSettings from "./routes/settings/get.ts";
import * as updateSettings from "./routes/settings/update.ts";
import * as createWebhook from "./routes/webhooks/create.ts";
import * as deleteWebhook from "./routes/webhooks/delete.ts";
import * as enableWebhook from "./routes/webhooks/enable.ts";
import * as testWebhookFilter from "./routes/webhooks/filter-test.ts";
import * as getWebhook from "./routes/webhooks/get.ts";
import * as listWebhooks from "./routes/webhooks/list.ts";
import * as recoverWebhook from "./routes/webhooks/recover.ts";
import * as rotateWebhook from "./routes/webhooks/rotate.ts";
import * as sendTestEvent from "./routes/webhooks/send-test.ts";
import * as updateWebhook from "./routes/webhooks/update.ts";
import { validationHook } from "./validation.ts";

export type { HttpDeps } from "./env.ts";

export const API_PREFIX = "/api/v1";

/** The platform's calls, which spend the publishing budget (ADR 12); every other call spends the management one. */
const PUBLISH_PATHS = new Set([`${API_PREFIX}/events`, `${API_PREFIX}/events/batch`]);
const isPublish = (c: Context<AppEnv>) => c.req.method === "POST" && PUBLISH_PATHS.has(c.req.path);

// The literal /webhooks/deliveries/... routes come before /webhooks/{id}/..., so a delivery path is
// never read as an endpoint id.
const API_ROUTES = [
  getDelivery,
  retryDelivery,
  listDeliveries,
  createWebhook,
  listWebhooks,
  getWebhook,
  updateWebhook,
  rotateWebhook,
  enableWebhook,
  sendTestEvent,
  testWebhookFilter,
  recoverWebhook,
  deleteWebhook,
  publishEvent,
  publishEvents,
  getEvent,
  createErasure,
  listErasures,
  getErasure,
  getSettings,
  updateSettings,
];

/**
 * The HTTP edge: /api/v1 (bearer auth), health, readiness, metrics, the OpenAPI document and its
 * Scalar reference. Order under /api/v1: request id, access log, auth (401), then per route the body
 * checks (413, 415, 400), schema validation (422) and the use case.
 */
export function createHttpApp(deps: HttpDeps): HttpApp {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API token (hrld_...) from `herald tokens create`.",
  });

  app.use("*", requestId(deps.logger), accessLog());
  app.use(`${API_PREFIX}/*`, bearerAuth(deps.tokens));
  if (deps.rateLimit) {
    const { limit, clock } = deps.rateLimit;
    const budget = {
      name: RATE_LIMIT_POLICY_NAME,
      counts: "requests",
      applies: (c: Context<AppEnv>) => !isPublish(c),
    };
    app.use(`${API_PREFIX}/*`, rateLimit(limit, clock, budget));
  }
  if (deps.publishRateLimit) {
    const { limit, clock } = deps.publishRateLimit;
    const budget = {
      name: PUBLISH_RATE_LIMIT_POLICY_NAME,
      counts: "publishing requests",
      applies: isPublish,
    };
    app.use(`${API_PREFIX}/*`, rateLimit(limit, clock, budget));
  }

  const api = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  for (const r of API_ROUTES) r.register(api, deps);
  portalSessions.register(api, deps);
  listenSessions.register(api, deps);
  app.route(API_PREFIX, api);
  registerEventWebhooks(app.openAPIRegistry);
  if (deps.console) app.route("/", consoleApp(deps, deps.console));

  healthz.register(app, deps);
  readyz.register(app, deps);
  metrics.register(app, deps);

  let document: ReturnType<typeof openApiDocument> | undefined;
  app.get("/openapi.json", (c) => {
    document ??= openApiDocument(app, deps.version);
    return c.json(document);
  });
  registerDocs(app);

  let allowedMethods: ((path: string) => string[]) | undefined;
  app.notFound((c) => {
    allowedMethods ??= allowedMethodsOf(app.routes);
    const allow = allowedMethods(c.req.path);
    if (allow.length > 0) {
      return respondProblem(c, {
        code: "method_not_allowed",
        detail: `${c.req.method} is not allowed here; this path takes ${allow.join(", ")}.`,
        headers: { Allow: allow.join(", ") },
      });
    }
    return respondProblem(c, { code: "not_found", detail: "No resource exists at this path." });
  });
  app.onError((error, c) => {
    const known = problemFromError(error);
    if (known) {
      if (known.code === "unavailable") logUnavailable(c.var.logger, error, known);
      return respondProblem(c, known);
    }
    const id = c.get("requestId") ?? "unknown";
    c.var.logger.error("unhandled error", { error, stack: error.stack });
    return respondProblem(c, internalProblem(id));
  });
  return app;
}
