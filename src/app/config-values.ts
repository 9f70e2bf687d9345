// The parsers of configuration values, one per kind: each turns an environment variable's text into
// its typed value, or into one issue naming the variable (never repeating a value that may be secret).
import { z } from "zod";
import { DEFAULT_RETRY_SCHEDULE_MS } from "../domain/backoff.ts";
import { ProxySettingError, parseEgressProxy, parseNoProxy } from "../domain/egress-proxy.ts";
import { fromBase64 } from "../domain/encoding.ts";
import { formatDuration, parseDuration } from "../domain/time.ts";

export const duration = (name: string, fallback: string, min = 0) =>
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

export const bool = (name: string) =>
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

export const int = (name: string, fallback: number, min: number, max: number) =>
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

export const schedule = z
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

export const rateLimit = (name: string, fallback: string) =>
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

export const masterKey = z
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
export const frameAncestors = z
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
export const deliveryProxy = z
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

export const noProxy = z
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
