import { z } from "zod";
import { DEFAULT_RETRY_SCHEDULE_MS } from "../domain/backoff.ts";
import {
  type EgressProxy,
  type NoProxyRule,
  ProxySettingError,
  parseEgressProxy,
  parseNoProxy,
} from "../domain/egress-proxy.ts";
import { fromBase64 } from "../domain/encoding.ts";
import { formatDuration, parseDuration } from "../domain/time.ts";
import { parseTelemetryConfig, type TelemetryConfig, TelemetryConfigError } from "./telemetry-config.ts";

const duration = (name: string, fallback: string, min = 0) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      if (ms === null || ms < min) {
        ctx.addIssue({
          code: "custom",
          message: `${name} must be a duration like 500ms, 5s, 2m, 1h or 5d${min ? ` of at least ${formatDuration(min)}` : ""} (got "${text}")`,
        });
        return z.NEVER;
      }
      return ms;
    });

const bool = (name: string) =>
  z
    .string()
    .default("false")
    .transform((text, ctx) => {
      const v = text.trim().toLowerCase();
      if (["true", "1", "yes"].includes(v)) return true;
      if (["false", "0", "no", ""].includes(v)) return false;
      ctx.addIssue({ code: "custom", message: `${name} must be true or false (got "${text}")` });
      return z.NEVER;
    });

const int = (name: string, fallback: number, min: number, max: number) =>
  z
    .string()
    .default(String(fallback))
    .transform((text, ctx) => {
      const n = Number(text);
      if (!/^\d+$/.test(text.trim()) || n < min || n > max) {
        ctx.addIssue({
          code: "custom",
          message: `${name} must be a whole number from ${min} to ${max} (got "${text}")`,
        });
        return z.NEVER;
      }
      return n;
    });

/** Written `HERALD_RETRY_SCHEDULE=none`: no automatic retries, only the first attempt (and manual ones). */
export const NO_RETRIES = "none";

const schedule = z
  .string()
  .default(DEFAULT_RETRY_SCHEDULE_MS.map(formatDuration).join(","))
  .transform((text, ctx) => {
    if (text.trim().toLowerCase() === NO_RETRIES) return [];
    const ms = text.split(",").map((p) => parseDuration(p.trim()));
    // An empty value is refused like every other: it used to mean "no retries", which nobody means by accident.
    if (text.trim() === "" || ms.some((m) => m === null || m > 86_400_000)) {
      ctx.addIssue({
        code: "custom",
        message: `HERALD_RETRY_SCHEDULE must be durations separated by commas, each at most 24h, like 5s,30s,2m, or ${NO_RETRIES} for no retries (got "${text}")`,
      });
      return z.NEVER;
    }
    return ms as number[];
  });

/** Requests per token: a bucket of `burst` requests, refilled at `perSecond`. */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

const RATE_UNITS: Record<string, number> = { s: 1, m: 60, h: 3_600 };
const RATE_LIMIT = /^(\d+)\/(s|m|h)(?:,burst=(\d+))?$/;
export const DEFAULT_RATE_LIMIT = "100/s";
/**
 * Publishing's own budget (ADR 12): a thousand events a second per token and process, and two seconds'
 * worth at once, so a platform publishing at its own pace (16 publishers, thousands of events) is not
 * refused while a person's management calls keep the tighter HERALD_RATE_LIMIT.
 */
export const DEFAULT_PUBLISH_RATE_LIMIT = "1000/s,burst=2000";

/**
 * `100/s`, `6000/m`, `100/s,burst=300`, or `off`: N requests per second, minute or hour per token, in
 * bursts of up to N (or the burst given). null when off.
 */
export function parseRateLimit(text: string): RateLimit | null | undefined {
  const v = text.trim().toLowerCase().replaceAll(" ", "");
  if (v === "off" || v === "none") return null;
  const m = RATE_LIMIT.exec(v);
  if (!m) return undefined;
  const count = Number(m[1]);
  const burst = m[3] === undefined ? count : Number(m[3]);
  if (count < 1 || count > 1_000_000 || burst < 1 || burst > 1_000_000) return undefined;
  return { perSecond: count / (RATE_UNITS[m[2]!] ?? 1), burst };
}

const rateLimit = (name: string, fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const parsed = parseRateLimit(text);
      if (parsed === undefined) {
        ctx.addIssue({
          code: "custom",
          message: `${name} must be requests per token like 100/s, 6000/m or 100/s,burst=300 (1 to 1000000), or off (got "${text}")`,
        });
        return z.NEVER;
      }
      return parsed;
    });

const masterKey = z
  .string()
  .optional()
  .transform((text, ctx) => {
    if (text === undefined || text === "") return null;
    try {
      const bytes = fromBase64(text.trim());
      if (bytes.length === 32) return bytes;
    } catch {
      // reported below
    }
    ctx.addIssue({ code: "custom", message: "HERALD_MASTER_KEY must be 32 bytes written in base64" });
    return z.NEVER;
  });

// Origins that may frame the customer portal: space- or comma-separated http(s) origins (or 'self').
const frameAncestors = z
  .string()
  .default("")
  .transform((text, ctx) => {
    const items = text.split(/[\s,]+/).filter(Boolean);
    const bad = items.find((o) => o !== "'self'" && !/^https?:\/\/(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$/.test(o));
    if (bad !== undefined) {
      ctx.addIssue({
        code: "custom",
        message: `HERALD_PORTAL_FRAME_ANCESTORS must be origins like https://app.example.com separated by spaces (got "${bad}")`,
      });
      return z.NEVER;
    }
    return items;
  });

// The value may carry a password: messages say what is wrong and never repeat it.
const deliveryProxy = z
  .string()
  .optional()
  .transform((text, ctx) => {
    if (text === undefined || text.trim() === "") return null;
    try {
      return parseEgressProxy(text);
    } catch (e) {
      if (!(e instanceof ProxySettingError)) throw e;
      ctx.addIssue({ code: "custom", message: `HERALD_DELIVERY_PROXY ${e.message}` });
      return z.NEVER;
    }
  });

const noProxy = z
  .string()
  .default("")
  .transform((text, ctx) => {
    try {
      return parseNoProxy(text);
    } catch (e) {
      if (!(e instanceof ProxySettingError)) throw e;
      ctx.addIssue({ code: "custom", message: `HERALD_DELIVERY_NO_PROXY ${e.message}` });
      return z.NEVER;
    }
  });

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
