import {
  disableEndpoint,
  type Endpoint,
  enableEndpoint,
  heldCount,
  type Ordering,
  rotateSecrets,
} from "../domain/endpoint.ts";
import { endpointUrlIssues } from "../domain/endpoint-url.ts";
import { invalid, notFound } from "../domain/errors.ts";
import type { EventType } from "../domain/event-catalog.ts";
import { type RateLimit, rateLimitIssues } from "../domain/rate-limit.ts";
import { newEndpointSecret } from "../domain/signing.ts";
import type { AppDeps } from "./deps.ts";
import type { EndpointFilter, EndpointPatch } from "./ports/endpoints.ts";
import type { Page, PageRequest, Scope } from "./ports/paging.ts";

export interface EndpointInput {
  url: string;
  events: EventType[];
  description?: string | null | undefined;
  /** null or absent: no limit. */
  rateLimit?: RateLimit | null | undefined;
  /** Absent: "none". */
  ordering?: Ordering | undefined;
}

export interface EndpointChange {
  url?: string | undefined;
  events?: EventType[] | undefined;
  description?: string | null | undefined;
  enabled?: boolean | undefined;
  /** null removes the limit. */
  rateLimit?: RateLimit | null | undefined;
  ordering?: Ordering | undefined;
}

/** An endpoint together with the plain secret just issued (creation, rotation): shown once. */
export interface EndpointWithSecret {
  endpoint: Endpoint;
  secret: string;
}

/** Registering, reading, changing and removing endpoints. */
export function endpointUseCases(deps: AppDeps) {
  const { repos, clock, ids, cipher } = deps;

  const checkUrl = (url: string) => {
    const issues = endpointUrlIssues(url, {
      allowHttp: deps.policy.allowHttpUrls,
      allowPrivateNetworks: deps.policy.allowPrivateNetworks,
    });
    if (issues.length) throw invalid(issues);
  };

  const checkRateLimit = (limit: RateLimit | null | undefined) => {
    const issues = limit ? rateLimitIssues(limit) : [];
    if (issues.length) throw invalid(issues.map((message) => ({ path: "rate_limit", message })));
  };

  const mustGet = async (scope: Scope, id: string) => {
    const e = await repos.endpoints.get(scope, id);
    if (!e) throw notFound("The endpoint");
    return e;
  };

  return {
    async create(scope: Scope, input: EndpointInput): Promise<EndpointWithSecret> {
      checkUrl(input.url);
      checkRateLimit(input.rateLimit);
      const now = clock.now();
      const secret = newEndpointSecret(ids.randomBytes(32));
      const endpoint: Endpoint = {
        id: ids.uuid(),
        tenantId: scope.tenantId,
        projectId: scope.projectId,
        url: input.url,
        events: input.events,
        description: input.description ?? null,
        enabled: true,
        disabledReason: null,
        secrets: [{ sealed: await cipher.seal(secret), expiresAt: null }],
        // Kept to the millisecond so lists stay newest first within a second; the API shows it to the second.
        createdAt: now,
        updatedAt: now,
        failingSince: null,
        rateLimit: input.rateLimit ?? null,
        ordering: input.ordering ?? "none",
      };
      await repos.endpoints.insert(endpoint);
      return { endpoint, secret };
    },

    list(scope: Scope, filter: EndpointFilter, page: PageRequest): Promise<Page<Endpoint>> {
      return repos.endpoints.list(scope, filter, page);
    },

    get: mustGet,

    /** For each endpoint, how many of its deliveries its ordering holds back (ADR 16); 0 without one. */
    async held(endpoints: readonly Endpoint[]): Promise<Map<string, number>> {
      const fifo = endpoints.filter((e) => e.ordering === "fifo");
      const pending = fifo.length ? await repos.deliveries.countPending(fifo.map((e) => e.id)) : new Map();
      return new Map(endpoints.map((e) => [e.id, heldCount(e.ordering, pending.get(e.id) ?? 0)]));
    },

    async update(scope: Scope, id: string, change: EndpointChange): Promise<Endpoint> {
      if (change.url !== undefined) checkUrl(change.url);
      checkRateLimit(change.rateLimit);
      const current = await mustGet(scope, id);
      const now = clock.now();
      const patch: EndpointPatch = {
        updatedAt: now,
        url: change.url,
        events: change.events,
        description: change.description,
        rateLimit: change.rateLimit,
        ordering: change.ordering,
      };
      if (change.enabled === true && !current.enabled) {
        const on = enableEndpoint(current, now);
        Object.assign(patch, {
          enabled: on.enabled,
          disabledReason: on.disabledReason,
          failingSince: on.failingSince,
        });
      } else if (change.enabled === false && current.enabled) {
        const off = disableEndpoint(current, "manual", now);
        Object.assign(patch, { enabled: off.enabled, disabledReason: off.disabledReason });
      }
      const updated = await repos.endpoints.update(scope, id, patch);
      if (!updated) throw notFound("The endpoint");
      return updated;
    },

    async rotate(scope: Scope, id: string, gracePeriodSeconds: number): Promise<EndpointWithSecret> {
      const current = await mustGet(scope, id);
      const now = clock.now();
      const secret = newEndpointSecret(ids.randomBytes(32));
      const secrets = rotateSecrets(
        current.secrets,
        await cipher.seal(secret),
        gracePeriodSeconds * 1000,
        now,
      );
      const updated = await repos.endpoints.update(scope, id, { secrets, updatedAt: now });
      if (!updated) throw notFound("The endpoint");
      return { endpoint: updated, secret };
    },

    async enable(scope: Scope, id: string): Promise<Endpoint> {
      const current = await mustGet(scope, id);
      const on = enableEndpoint(current, clock.now());
      const updated = await repos.endpoints.update(scope, id, {
        enabled: on.enabled,
        disabledReason: on.disabledReason,
        failingSince: on.failingSince,
        updatedAt: on.updatedAt,
      });
      if (!updated) throw notFound("The endpoint");
      return updated;
    },

    /** Removes the endpoint, then cancels what was still owed to it (the dispatcher also drops deliveries of a missing endpoint). */
    async remove(scope: Scope, id: string): Promise<void> {
      const removed = await repos.endpoints.delete(scope, id);
      if (!removed) throw notFound("The endpoint");
      await repos.deliveries.cancelPending(scope, id);
    },
  };
}

export type EndpointUseCases = ReturnType<typeof endpointUseCases>;
