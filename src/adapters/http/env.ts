import type { OpenAPIHono } from "@hono/zod-openapi";
import type { DeliveryUseCases } from "../../app/deliveries.ts";
import type { EndpointTools } from "../../app/endpoint-tools.ts";
import type { EndpointUseCases } from "../../app/endpoints.ts";
import type { EventUseCases } from "../../app/events.ts";
import type { Logger } from "../../app/logger.ts";
import type { Scope } from "../../app/ports/paging.ts";
import type { TokenUseCases } from "../../app/tokens.ts";
import type { ConsoleDeps } from "./console/env.ts";

/** What the HTTP edge needs, built once in the entry point. */
export interface HttpDeps {
  endpoints: EndpointUseCases;
  events: EventUseCases;
  deliveries: DeliveryUseCases;
  tokens: TokenUseCases;
  /** Test events and recovery after an outage. */
  tools: EndpointTools;
  /** Resolves when the database answers (readiness). */
  ping(): Promise<void>;
  /** The Prometheus text exposition. */
  metrics(): Promise<string>;
  logger: Logger;
  /** Herald's version: the OpenAPI document's info.version. */
  version: string;
  /** The browser console (/console), customer portal (/portal) and portal-session API; absent: not served. */
  console?: ConsoleDeps | undefined;
}

/** Per-request values handlers read from `c.var`. */
export interface AppEnv {
  Variables: {
    requestId: string;
    logger: Logger;
    /** Set by the bearer-token middleware on /api/v1; absent elsewhere. */
    scope: Scope;
  };
}

export type HttpApp = OpenAPIHono<AppEnv>;
