import type { Context, MiddlewareHandler } from "hono";
import type { RateLimit } from "../../app/config-values.ts";
import type { Clock } from "../../app/ports/system.ts";
import type { AppEnv } from "./env.ts";
import { bearerToken } from "./middleware/auth.ts";
import { respondProblem } from "./problem.ts";

/** The management budget's name in the RateLimit and RateLimit-Policy fields. */
export const RATE_LIMIT_POLICY_NAME = "per-token";
/** The publishing budget's name (POST /events and /events/batch; ADR 12). */
export const PUBLISH_RATE_LIMIT_POLICY_NAME = "publish";

export interface Take {
  allowed: boolean;
  /** Whole requests left in the bucket after this one. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one more request is allowed (for Retry-After); 0 when allowed. */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets, one per key (per API token), in this process's memory: each holds up to `burst`
 * requests and refills at `perSecond`. Time comes from the Clock port. A bucket that has filled up
 * again is the same as no bucket, so when more than `maxKeys` keys are held the full ones are
 * dropped first (losing nothing), then the least recently used.
 */
export function tokenBuckets(limit: RateLimit, clock: Clock, maxKeys = 10_000) {
  const buckets = new Map<string, Bucket>();
  const refill = (b: Bucket, now: number) => {
    b.tokens = Math.min(limit.burst, b.tokens + ((now - b.at) / 1000) * limit.perSecond);
    b.at = now;
  };
  const evict = (now: number) => {
    for (const [key, b] of buckets) {
      refill(b, now);
      if (b.tokens >= limit.burst) buckets.delete(key);
    }
    for (const key of buckets.keys()) {
      if (buckets.size <= maxKeys * 0.9) break;
      buckets.delete(key);
    }
  };
  return {
    take(key: string): Take {
      const now = clock.now().getTime();
      let b = buckets.get(key);
      if (b) {
        buckets.delete(key); // re-inserted below: the Map's order is least recently used first
        refill(b, now);
      } else {
        if (buckets.size >= maxKeys) evict(now);
        b = { tokens: limit.burst, at: now };
      }
      buckets.set(key, b);
      const allowed = b.tokens >= 1;
      if (allowed) b.tokens -= 1;
      return {
        allowed,
        remaining: Math.floor(b.tokens),
        resetSeconds: Math.ceil((limit.burst - b.tokens) / limit.perSecond),
        retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / limit.perSecond)),
      };
    },
    /** How many keys are held (tests). */
    size: () => buckets.size,
  };
}

/** The RateLimit-Policy field value (draft-ietf-httpapi-ratelimit-headers): quota and window in seconds. */
export function rateLimitPolicyField(limit: RateLimit, name = RATE_LIMIT_POLICY_NAME): string {
  const window = Math.max(1, Math.ceil(limit.burst / limit.perSecond));
  return `"${name}";q=${limit.burst};w=${window}`;
}

/** The RateLimit field value: what is left now and in how many seconds the quota is whole again. */
export function rateLimitField(take: Take, name = RATE_LIMIT_POLICY_NAME): string {
  return `"${name}";r=${take.remaining};t=${take.resetSeconds}`;
}

/** Which budget a limiter spends, and for which requests. */
export interface RateLimitBudget {
  /** The policy's name in the fields. */
  name: string;
  /** What is counted, for the 429's detail: "requests", "publishing requests". */
  counts: string;
  /** Whether a request spends this budget (the other budget's requests pass by). */
  applies(c: Context<AppEnv>): boolean;
}

const EVERY_REQUEST: RateLimitBudget = {
  name: RATE_LIMIT_POLICY_NAME,
  counts: "requests",
  applies: () => true,
};

/**
 * Limits /api/v1 requests per bearer token (runs after authentication, so only real tokens have
 * buckets), those the budget applies to. Every answer carries RateLimit-Policy and RateLimit; over the
 * limit the answer is 429 rate_limited with Retry-After, and the request goes no further.
 */
export function rateLimit(
  limit: RateLimit,
  clock: Clock,
  budget: RateLimitBudget = EVERY_REQUEST,
): MiddlewareHandler<AppEnv> {
  const buckets = tokenBuckets(limit, clock);
  const policy = rateLimitPolicyField(limit, budget.name);
  return async (c, next) => {
    if (!budget.applies(c)) return next();
    const token = bearerToken(c.req.header("Authorization"));
    if (!token) return next();
    const take = buckets.take(token);
    const headers = { "RateLimit-Policy": policy, RateLimit: rateLimitField(take, budget.name) };
    if (!take.allowed) {
      return respondProblem(c, {
        code: "rate_limited",
        detail: `This token has made more than ${limit.burst} ${budget.counts} in a burst or more than ${formatRate(limit)}; retry in ${take.retryAfterSeconds} s.`,
        headers: { ...headers, "Retry-After": String(take.retryAfterSeconds) },
      });
    }
    await next();
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  };
}

function formatRate(limit: RateLimit): string {
  if (limit.perSecond >= 1) return `${+limit.perSecond.toFixed(3)} per second`;
  if (limit.perSecond * 60 >= 1) return `${+(limit.perSecond * 60).toFixed(3)} per minute`;
  return `${+(limit.perSecond * 3600).toFixed(3)} per hour`;
}
