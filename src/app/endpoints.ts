import {
  headerInputIssues,
  headerSetIssues,
  mergeHeaders,
  type NamedValue,
} from "../domain/custom-headers.ts";
import {
  disableEndpoint,
  type Endpoint,
  enableEndpoint,
  heldCount,
  type Ordering,
  rotateSecrets,
  type StoredHeader,
} from "../domain/endpoint.ts";
import { endpointUrlIssues } from "../domain/endpoint-url.ts";
import { invalid, notFound } from "../domain/errors.ts";
import type { EventType } from "../domain/event-catalog.ts";
import { type EventFilter, filterIssues } from "../domain/event-filter.ts";
import { type RateLimit, rateLimitIssues } from "../domain/rate-limit.ts";
import { DEFAULT_SIGNATURE_SCHEME, type SignatureScheme } from "../domain/signature-scheme.ts";
import { newEndpointSecret } from "../domain/signing.ts";
import type { AppDeps } from "./deps.ts";
import type { EndpointFilter, EndpointPatch } from "./ports/endpoints.ts";
import type { Page, PageRequest, Scope } from "./ports/paging.ts";

export interface EndpointInput {
  url: string;
  events: EventType[];
  description?: string | null | undefined;
  /** Custom headers, name to plain value. */
  headers?: Readonly<Record<string, string>> | undefined;
  signatureScheme?: SignatureScheme | undefined;
  filter?: EventFilter | null | undefined;
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
  /** A merge patch of the custom headers: a value sets one, null removes one; null removes them all. */
  headers?: Readonly<Record<string, string | null>> | null | undefined;
  signatureScheme?: SignatureScheme | undefined;
  /** A new filter; null removes it; absent keeps it. */
  filter?: EventFilter | null | undefined;
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

  /** Every problem with a URL and headers to set, together: a 422 names them all at once. */
  const checkInput = (
    url: string | undefined,
    headers: Readonly<Record<string, string | null>> | null | undefined,
  ) => {
    const issues = [
      ...(url === undefined
        ? []
        : endpointUrlIssues(url, {
            allowHttp: deps.policy.allowHttpUrls,
            allowPrivateNetworks: deps.policy.allowPrivateNetworks,
          })),
      ...(headers ? headerInputIssues(headers) : []),
    ];
    if (issues.length) throw invalid(issues);
  };

  /**
   * The headers after a change (checked by checkInput), sealed; or the problems with the whole set
   * (current values are opened to size it).
   */
  const changedHeaders = async (
    current: readonly StoredHeader[],
    change: Readonly<Record<string, string | null>> | null,
  ): Promise<StoredHeader[]> => {
    type Held = { sealed: string | null; plain: string };
    const held: NamedValue<Held>[] = await Promise.all(
      current.map(async (h) => ({
        name: h.name,
        value: { sealed: h.sealed, plain: await cipher.open(h.sealed) },
      })),
    );
    const given =
      change === null
        ? null
        : Object.fromEntries(
            Object.entries(change).map(([name, v]) => [name, v === null ? null : { sealed: null, plain: v }]),
          );
    const merged = mergeHeaders<Held>(held, given);
    const setIssues = headerSetIssues(merged.map((h) => ({ name: h.name, value: h.value.plain })));
    if (setIssues.length) throw invalid(setIssues);
    return Promise.all(
      merged.map(async (h) => ({
        name: h.name,
        sealed: h.value.sealed ?? (await cipher.seal(h.value.plain)),
      })),
    );
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

  /** A filter must be valid and name only data fields of the endpoint's event types. */
  const checkFilter = (filter: EventFilter | null | undefined, events: readonly EventType[]) => {
    if (filter === undefined || filter === null) return;
    const issues = filterIssues(filter, { events });
    if (issues.length) throw invalid(issues);
  };

  return {
    async create(scope: Scope, input: EndpointInput): Promise<EndpointWithSecret> {
      checkInput(input.url, input.headers);
      const headers = await changedHeaders([], input.headers ?? {});
      checkFilter(input.filter, input.events);
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
        headers,
        signatureScheme: input.signatureScheme ?? DEFAULT_SIGNATURE_SCHEME,
        filter: input.filter ?? null,
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
      checkInput(change.url, change.headers);
      checkRateLimit(change.rateLimit);
      const current = await mustGet(scope, id);
      checkFilter(change.filter, change.events ?? current.events);
      if (change.events !== undefined && change.filter === undefined && current.filter !== null) {
        // New event types must not leave the kept filter naming fields none of them has.
        const stale = filterIssues(current.filter, { events: change.events });
        if (stale.length) {
          throw invalid([
            {
              path: "events",
              message: `leaves the endpoint's filter naming data fields none of these types has (${stale.map((i) => i.path).join(", ")}); change or remove the filter (filter: null) in the same request`,
            },
          ]);
        }
      }
      const now = clock.now();
      const patch: EndpointPatch = {
        updatedAt: now,
        url: change.url,
        events: change.events,
        description: change.description,
        signatureScheme: change.signatureScheme,
        headers:
          change.headers === undefined ? undefined : await changedHeaders(current.headers, change.headers),
        filter: change.filter,
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
