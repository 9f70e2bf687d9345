import { randomBytes, randomUUID } from "node:crypto";
import type { Sql } from "postgres";
import {
  createHeraldClient,
  type Delivery,
  type EventType,
  type HeraldClient,
  paginate,
  unwrap,
  type WebhookWithSecret,
} from "../../clients/typescript/client.ts";
import { systemClock, systemIds } from "../../src/adapters/system.ts";
import type { Repositories } from "../../src/app/ports/store.ts";
import { tokenUseCases } from "../../src/app/tokens.ts";
import { sampleEventData } from "../../src/domain/samples.ts";
import { type HeraldProcess, type StartOptions, startHerald } from "../support/herald-process.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import type { ReceivedRequest } from "../support/receiver.ts";
import { type FreshStore, freshStore, type TestStoreKind } from "../support/store.ts";
import { type TestTls, testTls } from "../support/tls.ts";
import { type UntilOptions, until } from "../support/until.ts";

/**
 * What the delivery e2e files share: one database per file on the run's PostgreSQL, a fixed master key
 * for every Herald process of the file, a token made through the same code the CLI uses, and a list
 * of every process started so `afterAll` can stop them whatever happened.
 */
export interface DeliveryWorld {
  /** The file's database: its `env` is what each Herald process is given to use it. */
  store: FreshStore;
  tls: TestTls;
  token: string;
  /** The repositories over the file's database, for what a test checks behind the API's back. */
  repos: Repositories;
  /** A SQL client on the file's database, for what no repository answers. */
  sql: Sql;
  /** The environment every Herald child of this file gets (plus `extra`). */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Starts a Herald process on this database; it is killed in `close()` if the test did not stop it. */
  start(extra?: Record<string, string>, options?: Omit<StartOptions, "env">): Promise<HeraldProcess>;
  client(baseUrl: string): HeraldClient;
  /** A token of a new tenant and project on this database: a scope of its own for one test. */
  newToken(): Promise<string>;
  /**
   * Stops every process still running (SIGTERM, SIGKILL after 15 s), then drops the database: graceful
   * first, so no process logs the lost database while it stops.
   */
  close(): Promise<void>;
}

export async function deliveryWorld(
  prefix: string,
  base: Record<string, string> = {},
  kind: TestStoreKind = "postgres",
): Promise<DeliveryWorld> {
  const store = await freshStore(prefix, kind);
  const tls = await testTls();
  const masterKey = randomBytes(32).toString("base64");
  const repos = await store.connect();
  // A MongoDB world has no SQL client: its tests use the repositories.
  const sql = kind === "postgres" ? await store.sql() : (undefined as unknown as Sql);
  const tokens = tokenUseCases({ tokens: repos.tokens, clock: systemClock, ids: systemIds });
  const issued = await tokens.create({ name: prefix });
  const processes: HeraldProcess[] = [];
  const env = (extra: Record<string, string> = {}) => ({
    ...store.env,
    HERALD_MASTER_KEY: masterKey,
    HERALD_ALLOW_PRIVATE_NETWORKS: "true",
    NODE_EXTRA_CA_CERTS: tls.caCertPath,
    HERALD_RETRY_SCHEDULE: "200ms,500ms,1s,1s,1s,1s,1s,1s",
    HERALD_LOG_LEVEL: "warn",
    ...base,
    ...extra,
  });
  return {
    store,
    tls,
    token: issued.token,
    repos,
    sql,
    env,
    async start(extra, options) {
      const p = await startHerald({ runtime: "node", ...options, env: env(extra) });
      processes.push(p);
      return p;
    },
    client: (baseUrl) => createHeraldClient({ baseUrl, token: issued.token }),
    newToken: async () => (await tokens.create({ name: prefix })).token,
    async close() {
      await Promise.allSettled(processes.map((p) => p.stop(15_000)));
      await store.cleanup();
    },
  };
}

/** Registers an endpoint and answers it with its secret. */
export function createEndpoint(
  client: HeraldClient,
  url: string,
  events: EventType[],
): Promise<WebhookWithSecret> {
  return unwrap(client.POST("/api/v1/webhooks", { body: { url, events, description: "e2e" } }));
}

/** A valid publish body for a type, with a fresh subject id. */
export function eventBody(type: EventType) {
  return { type, data: sampleEventData(type, { subjectId: randomUUID() }, new Date()) };
}

/**
 * Publishes with the raw fetch (so a dead process shows as a thrown error, not a parsed answer) and an
 * Idempotency-Key; answers the status and the event id when accepted.
 */
export async function publishRaw(
  baseUrl: string,
  token: string,
  body: ReturnType<typeof eventBody>,
  idempotencyKey: string,
): Promise<{ status: number; id: string | null; replayed: boolean }> {
  const r = await fetch(`${baseUrl}/api/v1/events`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      "idempotency-key": idempotencyKey,
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const json = (await r.json().catch(() => null)) as { id?: string } | null;
  return {
    status: r.status,
    id: r.status === 202 ? (json?.id ?? null) : null,
    replayed: r.headers.get("idempotent-replayed") === "true",
  };
}

/** Every delivery record of an endpoint (optionally filtered by status or event), all pages. */
export async function allDeliveries(
  client: HeraldClient,
  webhookId: string,
  filter: Delivery["status"] | { status?: Delivery["status"]; event_id?: string } = {},
): Promise<Delivery[]> {
  const query = typeof filter === "string" ? { status: filter } : filter;
  const out: Delivery[] = [];
  const pages = paginate((cursor) =>
    unwrap(
      client.GET("/api/v1/webhooks/{id}/deliveries", {
        params: { path: { id: webhookId }, query: { limit: 100, ...(cursor ? { cursor } : {}), ...query } },
      }),
    ),
  );
  for await (const d of pages) out.push(d);
  return out;
}

/**
 * `until` for whole-system tests: polls every 100 ms by default, since their checks ask a process over
 * HTTP or read the database.
 */
export function waitUntil(
  check: () => boolean | Promise<boolean>,
  what: () => string,
  options: UntilOptions = {},
): Promise<void> {
  return until(check, what, { everyMs: 100, ...options });
}

/**
 * How long a correctness test lets work make no progress at all before it calls it stuck. Not a speed
 * limit: a test waits as long as the count keeps moving, however slowly the machine and the store go,
 * and fails only when nothing moved for this long. Two minutes is far beyond any pause a healthy run
 * shows (a restart plus an expired lease are seconds); HERALD_E2E_STALL_MS overrides it.
 */
export const STALL_MS = Number(process.env.HERALD_E2E_STALL_MS ?? 0) || PATIENCE_MS;

/**
 * Waits until `count()` reaches `target`, however long that takes, as long as it keeps growing: throws
 * with `what()` once it has not grown for `stallMs` (default STALL_MS). Answers the last count.
 */
export async function waitForProgress(
  count: () => number | Promise<number>,
  target: number,
  what: (n: number) => string,
  options: { stallMs?: number; everyMs?: number } = {},
): Promise<number> {
  const stallMs = options.stallMs ?? STALL_MS;
  const everyMs = options.everyMs ?? 100;
  let best = -1;
  let movedAt = Date.now();
  for (;;) {
    const n = await count();
    if (n >= target) return n;
    if (n > best) {
      best = n;
      movedAt = Date.now();
    } else if (Date.now() - movedAt >= stallMs) {
      throw new Error(`no progress for ${stallMs} ms: ${what(n)}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Test timeout for a test that waits with `waitForProgress`: it fails by stalling, not by this. */
export const PROGRESS_TEST_TIMEOUT_MS = 3_600_000;

/** The event id a receiver saw (X-Webhook-Id). */
export const eventIdOf = (r: ReceivedRequest): string => String(r.headers["x-webhook-id"] ?? "");

/** The event type, from the signed body. */
export const eventTypeOf = (r: ReceivedRequest): string =>
  (JSON.parse(r.body.toString("utf8")) as { type: string }).type;

/**
 * How big the load tests are. 1 keeps them within CI's time on a busy 2-core machine (and on the
 * embedded PostgreSQL, where no server for the run could be had); HERALD_E2E_SCALE=10 runs them at the
 * issue's sizes.
 */
export const E2E_SCALE = Number(process.env.HERALD_E2E_SCALE ?? 1) || 1;

/** A small seeded PRNG (mulberry32), so a failing kill schedule can be replayed from the logged seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The seed: HERALD_E2E_SEED when given (to replay a run), otherwise a fresh one. */
export function testSeed(): number {
  const given = process.env.HERALD_E2E_SEED;
  return given ? Number(given) : Math.floor(Math.random() * 2 ** 31);
}

/** A counter of a Prometheus text page: the sum over the series whose labels contain `labels`. */
export async function scrapeCounter(baseUrl: string, name: string, labels = ""): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labels && !line.includes(labels)) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

/** Runs `fn` over `items` with at most `limit` at a time. */
export async function pool<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The q-quantile (0..1) of numbers. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

export { explainArrivals } from "./arrivals.ts";
