import type { OpenAPIHono } from "@hono/zod-openapi";
import type { RateLimit } from "../../app/config-values.ts";
import type { DeliveryUseCases } from "../../app/deliveries.ts";
import type { EndpointTools } from "../../app/endpoint-tools.ts";
import type { EndpointUseCases } from "../../app/endpoints.ts";
import type { RecordingBacklog } from "../../app/engine/record.ts";
import type { ErasureUseCases } from "../../app/erasures.ts";
import type { EventUseCases } from "../../app/events.ts";
import type { Logger } from "../../app/logger.ts";
import type { Scope } from "../../app/ports/paging.ts";
import type { Clock } from "../../app/ports/system.ts";
import type { SettingsUseCases } from "../../app/settings.ts";
import type { TokenUseCases } from "../../app/tokens.ts";
import type { ListenSessions } from "../listen/sessions.ts";
import type { ConsoleDeps } from "./console/env.ts";

/** What the HTTP edge needs, built once in the entry point. */
export interface HttpDeps {
  endpoints: EndpointUseCases;
  events: EventUseCases;
  deliveries: DeliveryUseCases;
  tokens: TokenUseCases;
  /** Erasure of a subject's events (ADR 15). */
  erasures: ErasureUseCases;
  /** The project's settings (its own retention). */
  settings: SettingsUseCases;
  /** Test events and recovery after an outage. */
  tools: EndpointTools;
  /** Resolves when the database answers (readiness). */
  ping(): Promise<void>;
  /** How far behind the engine's recording of results is (readiness); absent or null: no engine here. */
  recording?(): RecordingBacklog | null;
  /** Why the process should be restarted (liveness), or null while it is fine; always null when absent. */
  wedged?(): string | null;
  /** The Prometheus text exposition. */
  metrics(): Promise<string>;
  logger: Logger;
  /**
   * Requests per API token other than publishing (HERALD_RATE_LIMIT), timed by the clock; absent or
   * null: not limited.
   */
  rateLimit?: { limit: RateLimit; clock: Clock } | null;
  /**
   * Publishing requests per API token (POST /events and /events/batch; HERALD_PUBLISH_RATE_LIMIT), a
   * budget of their own (ADR 12); absent or null: not limited.
   */
  publishRateLimit?: { limit: RateLimit; clock: Clock } | null;
  /** Herald's version: the OpenAPI document's info.version. */
  version: string;
  /** This process's `herald listen` sessions (ADR 29); absent: the listen-session routes answer 404. */
  listen?: ListenSessions | undefined;
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
