import { z } from "zod";
import type { EgressProxy, NoProxyRule } from "../domain/egress-proxy.ts";
import {
  bool,
  DEFAULT_PUBLISH_RATE_LIMIT,
  DEFAULT_RATE_LIMIT,
  deliveryProxy,
  duration,
  frameAncestors,
  int,
  masterKey,
  noProxy,
  type RateLimit,
  rateLimit,
  schedule,
} from "./config-values.ts";
import { parseTelemetryConfig, type TelemetryConfig, TelemetryConfigError } from "./telemetry-config.ts";

const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;

/**
 * Where Herald keeps its data: PostgreSQL (DATABASE_URL, or the embedded one), MongoDB (MONGODB_URI, or
 * an embedded mongod where one can be had), or process memory (lost on exit; benchmarks, demos).
 */
export const STORES = ["postgres", "mongo", "memory"] as const;
export type StoreKind = (typeof STORES)[number];

export const configSchema = z.object({
  PORT: int("PORT", 8080, 0, 65535),
  HOST: z.string().min(1).default("0.0.0.0"),
  DATABASE_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === "" || /^postgres(ql)?:\/\//.test(v), {
      message: "DATABASE_URL must start with postgres:// or postgresql://",
    })
    .transform((v) => (v ? v : null)),
  MONGODB_URI: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === "" || /^mongodb(\+srv)?:\/\//.test(v), {
      message: "MONGODB_URI must start with mongodb:// or mongodb+srv://",
    })
    .transform((v) => (v ? v : null)),
  MONGODB_DB: z
    .string()
    .default("herald")
    .refine((v) => /^[A-Za-z0-9_-]{1,63}$/.test(v), {
      message: "MONGODB_DB must be a database name of letters, digits, _ and -",
    }),
  HERALD_DATA_DIR: z.string().min(1).default("./.herald"),
  HERALD_MASTER_KEY: masterKey,
  HERALD_RETRY_SCHEDULE: schedule,
  HERALD_RATE_LIMIT: rateLimit("HERALD_RATE_LIMIT", DEFAULT_RATE_LIMIT),
  HERALD_PUBLISH_RATE_LIMIT: rateLimit("HERALD_PUBLISH_RATE_LIMIT", DEFAULT_PUBLISH_RATE_LIMIT),
  HERALD_DELIVERY_TIMEOUT: duration("HERALD_DELIVERY_TIMEOUT", "15s", 1),
  HERALD_LEASE_MARGIN: duration("HERALD_LEASE_MARGIN", "60s", 1_000),
  HERALD_CONCURRENCY: int("HERALD_CONCURRENCY", 200, 1, 10_000),
  HERALD_ENDPOINT_CONCURRENCY: int("HERALD_ENDPOINT_CONCURRENCY", 10, 1, 1_000),
  HERALD_DISABLE_AFTER: duration("HERALD_DISABLE_AFTER", "5d", 1),
  HERALD_FAILING_AFTER: duration("HERALD_FAILING_AFTER", "1h", 1),
  HERALD_RETENTION: duration("HERALD_RETENTION", "30d", 60_000),
  HERALD_ALLOW_PRIVATE_NETWORKS: bool("HERALD_ALLOW_PRIVATE_NETWORKS"),
  HERALD_ALLOW_HTTP_URLS: bool("HERALD_ALLOW_HTTP_URLS"),
  HERALD_DELIVERY_PROXY: deliveryProxy,
  HERALD_DELIVERY_NO_PROXY: noProxy,
  HERALD_STORE: z.enum(STORES, { error: `HERALD_STORE must be one of ${STORES.join(", ")}` }).optional(),
  HERALD_PORTAL_FRAME_ANCESTORS: frameAncestors,
  HERALD_LOG_LEVEL: z
    .string()
    .default("info")
    .transform((v) => v.toLowerCase())
    .pipe(z.enum(LOG_LEVELS, { error: `HERALD_LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}` })),
});

export type LogLevel = (typeof LOG_LEVELS)[number];

/** Configuration after parsing: durations in milliseconds, flags as booleans. */
export interface Config {
  port: number;
  host: string;
  /** DATABASE_URL: the PostgreSQL server to use; null with the embedded one (or another store). */
  databaseUrl: string | null;
  mongodbUri: string | null;
  mongodbDb: string;
  dataDir: string;
  masterKey: Uint8Array | null;
  retryScheduleMs: number[];
  /** API requests per token other than publishing (HERALD_RATE_LIMIT); null: not limited. */
  rateLimit: RateLimit | null;
  /** Publishing requests per token, a budget of their own (HERALD_PUBLISH_RATE_LIMIT); null: not limited. */
  publishRateLimit: RateLimit | null;
  deliveryTimeoutMs: number;
  /** A lease lasts deliveryTimeoutMs + leaseMarginMs; after a crash, its deliveries wait that long. */
  leaseMarginMs: number;
  concurrency: number;
  endpointConcurrency: number;
  disableAfterMs: number;
  /** A failure streak this long is reported by endpoint.failing (ADR 20). */
  failingAfterMs: number;
  retentionMs: number;
  allowPrivateNetworks: boolean;
  allowHttpUrls: boolean;
  /** HERALD_DELIVERY_PROXY: the forward proxy deliveries tunnel through (CONNECT), or null: direct. */
  deliveryProxy: EgressProxy | null;
  /** HERALD_DELIVERY_NO_PROXY: endpoint hosts that are delivered to directly even with a proxy. */
  deliveryNoProxy: NoProxyRule[];
  /**
   * Names (never values) of the conventional proxy variables set (HTTP_PROXY, HTTPS_PROXY, any case),
   * unless NO_PROXY is `*`. Herald ignores them; Bun's and Deno's fetch do not, so on those runtimes they
   * are removed from the process's environment at start (ADR 21).
   */
  ambientProxyVariables: string[];
  logLevel: LogLevel;
  /**
   * postgres (DATABASE_URL, or embedded when it is unset: the default), mongo (MONGODB_URI, or an embedded
   * mongod), or memory: everything in process memory, lost on exit (benchmarks, demos).
   */
  store: StoreKind;
  /** Origins allowed to embed the customer portal in an iframe; empty: none. */
  portalFrameAncestors: string[];
  /** OpenTelemetry export, from the standard OTEL_* variables (ADR 24); null or absent: off. */
  telemetry?: TelemetryConfig | null;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

function ambientProxyVariables(env: Record<string, string | undefined>): string[] {
  const set = (name: string) => (env[name] ?? "").trim() !== "";
  const noProxy = (env.NO_PROXY ?? env.no_proxy ?? "").trim();
  if (noProxy === "*") return [];
  return ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"].filter(set);
}

/** Parses the environment once; a bad value throws a ConfigError whose message is one line naming the variable. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined));
  const r = configSchema.safeParse(present);
  if (!r.success) {
    const first = r.error.issues[0];
    const name = String(first?.path[0] ?? "configuration");
    const message = first?.message ?? "invalid";
    throw new ConfigError(message.includes(name) ? message : `${name}: ${message}`);
  }
  const c = r.data;
  if (c.DATABASE_URL && c.MONGODB_URI)
    throw new ConfigError(
      "DATABASE_URL and MONGODB_URI are both set: Herald uses one database; unset one of them",
    );
  const store: StoreKind = c.HERALD_STORE ?? (c.MONGODB_URI ? "mongo" : "postgres");
  if (store === "postgres" && c.MONGODB_URI)
    throw new ConfigError("HERALD_STORE is postgres but MONGODB_URI is set: set DATABASE_URL instead");
  if (store === "mongo" && c.DATABASE_URL)
    throw new ConfigError("HERALD_STORE is mongo but DATABASE_URL is set: set MONGODB_URI instead");
  let telemetry: TelemetryConfig | null;
  try {
    telemetry = parseTelemetryConfig(env);
  } catch (e) {
    throw e instanceof TelemetryConfigError ? new ConfigError(e.message) : e;
  }
  return {
    port: c.PORT,
    host: c.HOST,
    databaseUrl: c.DATABASE_URL,
    mongodbUri: c.MONGODB_URI,
    mongodbDb: c.MONGODB_DB,
    dataDir: c.HERALD_DATA_DIR,
    masterKey: c.HERALD_MASTER_KEY,
    retryScheduleMs: c.HERALD_RETRY_SCHEDULE,
    rateLimit: c.HERALD_RATE_LIMIT,
    publishRateLimit: c.HERALD_PUBLISH_RATE_LIMIT,
    deliveryTimeoutMs: c.HERALD_DELIVERY_TIMEOUT,
    leaseMarginMs: c.HERALD_LEASE_MARGIN,
    concurrency: c.HERALD_CONCURRENCY,
    endpointConcurrency: c.HERALD_ENDPOINT_CONCURRENCY,
    disableAfterMs: c.HERALD_DISABLE_AFTER,
    failingAfterMs: c.HERALD_FAILING_AFTER,
    retentionMs: c.HERALD_RETENTION,
    allowPrivateNetworks: c.HERALD_ALLOW_PRIVATE_NETWORKS,
    allowHttpUrls: c.HERALD_ALLOW_HTTP_URLS,
    deliveryProxy: c.HERALD_DELIVERY_PROXY,
    deliveryNoProxy: c.HERALD_DELIVERY_NO_PROXY,
    ambientProxyVariables: ambientProxyVariables(env),
    logLevel: c.HERALD_LOG_LEVEL,
    store,
    portalFrameAncestors: c.HERALD_PORTAL_FRAME_ANCESTORS,
    telemetry,
  };
}
