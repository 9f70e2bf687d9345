import { createHeraldClient, type HeraldClient } from "../../clients/typescript/client.ts";
import { createAesGcmCipher } from "../../src/adapters/crypto/aes-gcm-cipher.ts";
import { createCertificateReader } from "../../src/adapters/crypto/client-certificates.ts";
import { createSubjectKeys } from "../../src/adapters/crypto/subject-keys.ts";
import { createHttpApp } from "../../src/adapters/http/app.ts";
import type { HttpApp, HttpDeps } from "../../src/adapters/http/env.ts";
import { createJsonLogger } from "../../src/adapters/json-logger.ts";
import { createMemoryRepositories } from "../../src/adapters/memory/repositories.ts";
import { createPrometheusMetrics } from "../../src/adapters/metrics/prometheus.ts";
import { systemIds } from "../../src/adapters/system.ts";
import type { RateLimit } from "../../src/app/config-values.ts";
import { deliveryUseCases } from "../../src/app/deliveries.ts";
import type { AppDeps } from "../../src/app/deps.ts";
import { endpointTools } from "../../src/app/endpoint-tools.ts";
import { endpointUseCases } from "../../src/app/endpoints.ts";
import { erasureUseCases } from "../../src/app/erasures.ts";
import { eventUseCases } from "../../src/app/events.ts";
import type { Repositories } from "../../src/app/ports/store.ts";
import type { Clock } from "../../src/app/ports/system.ts";
import { settingsUseCases } from "../../src/app/settings.ts";
import { tokenUseCases } from "../../src/app/tokens.ts";

/** A token as `herald tokens create --json` prints it. */
export interface IssuedApiToken {
  token: string;
  tenant_id: string;
  project_id: string;
}

export interface ApiHarnessOptions {
  /** Repositories for the use cases (default: fresh in-memory ones). */
  repos?: Repositories;
  /** Repositories the token check uses (default: `repos`), so a test can break the rest of the store only. */
  tokenRepos?: Repositories;
  /** Replaces parts of the HTTP deps (a failing use case, ping, metrics). */
  override?: (deps: HttpDeps) => Partial<HttpDeps>;
  allowHttpUrls?: boolean;
  /** HERALD_ALLOW_PRIVATE_NETWORKS: endpoint URLs may name loopback and private IP literals. */
  allowPrivateNetworks?: boolean;
  /** HERALD_RATE_LIMIT, timed by the given clock (default: not limited). */
  rateLimit?: { limit: RateLimit; clock: Clock };
  /** HERALD_RETENTION: the longest retention a project may choose (default 30d, as the server's). */
  maxRetentionMs?: number;
}

/** HERALD_RETENTION's default. */
export const DEFAULT_MAX_RETENTION_MS = 30 * 86_400_000;

/** A dispatch signal that counts its notifications. */
export interface CountingSignal {
  count: number;
  notify(): void;
}

export interface ApiHarness {
  app: HttpApp;
  repos: Repositories;
  signal: CountingSignal;
  /** Every JSON log line the app wrote. */
  logLines: string[];
  baseUrl: string;
  fetch: (request: Request) => Promise<Response>;
  /** The typed client, talking to the app in-process. */
  client(token?: string): HeraldClient;
  /** Issues a token; a new tenant and project unless given. */
  newToken(scope?: { tenantId?: string; projectId?: string }): Promise<IssuedApiToken>;
  revokeToken(token: string): Promise<void>;
}

/**
 * The wall clock, but never the same millisecond twice: in-process requests are fast enough to create
 * two records in one millisecond, and newest-first order would then fall back to the random id.
 */
export function strictlyIncreasingClock(): Clock {
  let last = 0;
  return {
    now() {
      last = Math.max(Date.now(), last + 1);
      return new Date(last);
    },
  };
}

/** The HTTP app wired with real use cases over in-memory (or given) repositories, called without a network. */
export async function makeApiHarness(options: ApiHarnessOptions = {}): Promise<ApiHarness> {
  const repos = options.repos ?? createMemoryRepositories();
  const tokenRepos = options.tokenRepos ?? repos;
  const signal: CountingSignal = {
    count: 0,
    notify() {
      this.count++;
    },
  };
  const clock = strictlyIncreasingClock();
  const appDeps: AppDeps = {
    repos,
    clock,
    ids: systemIds,
    cipher: await createAesGcmCipher(crypto.getRandomValues(new Uint8Array(32))),
    subjects: await createSubjectKeys(crypto.getRandomValues(new Uint8Array(32))),
    certificates: createCertificateReader(),
    signal,
    policy: {
      allowHttpUrls: options.allowHttpUrls ?? false,
      allowPrivateNetworks: options.allowPrivateNetworks ?? false,
    },
  };
  const tokens = tokenUseCases({ tokens: tokenRepos.tokens, clock, ids: systemIds });
  const logLines: string[] = [];
  // The real exposition, so the suite can read counters such as herald_events_filtered_total.
  const prometheus = createPrometheusMetrics(async () => {
    const s = await repos.deliveries.dueStats(clock.now());
    return { dueBacklog: s.count, oldestDueAgeSeconds: 0 };
  });
  const events = eventUseCases(appDeps, prometheus.fanOut);
  const base: HttpDeps = {
    endpoints: endpointUseCases(appDeps),
    events,
    deliveries: deliveryUseCases(appDeps),
    tools: endpointTools(appDeps, events),
    tokens,
    erasures: erasureUseCases(appDeps),
    settings: settingsUseCases({
      settings: repos.settings,
      clock,
      maxRetentionMs: options.maxRetentionMs ?? DEFAULT_MAX_RETENTION_MS,
    }),
    ping: () => repos.ping(),
    metrics: prometheus.render,
    logger: createJsonLogger("debug", (line) => logLines.push(line)),
    version: "0.0.0-test",
    rateLimit: options.rateLimit ?? null,
  };
  const app = createHttpApp({ ...base, ...options.override?.(base) });
  const baseUrl = "http://herald.test";
  const fetch = (request: Request) => Promise.resolve(app.fetch(request));
  const tokenIds = new Map<string, string>();

  return {
    app,
    repos,
    signal,
    logLines,
    baseUrl,
    fetch,
    client: (token) => createHeraldClient({ baseUrl, token, fetch }),
    async newToken(scope = {}) {
      const { token, record } = await tokens.create(scope);
      tokenIds.set(token, record.id);
      return { token, tenant_id: record.tenantId, project_id: record.projectId };
    },
    async revokeToken(token) {
      const id = tokenIds.get(token);
      if (!id || !(await tokens.revoke(id))) throw new Error("not a live token of this harness");
    },
  };
}
