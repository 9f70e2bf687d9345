import type { ClientCertificateInput } from "../domain/client-certificate.ts";
import type { BrokerDestination } from "../domain/destination.ts";
import {
  type Endpoint,
  enableEndpoint,
  heldCount,
  type Ordering,
  rotateSecrets,
} from "../domain/endpoint.ts";
import { invalid, notFound } from "../domain/errors.ts";
import type { EventType } from "../domain/event-catalog.ts";
import type { EventFilter } from "../domain/event-filter.ts";
import type { RateLimit } from "../domain/rate-limit.ts";
import { DEFAULT_SIGNATURE_SCHEME, keyKind, type SignatureScheme } from "../domain/signature-scheme.ts";
import type { AppDeps } from "./deps.ts";
import { type EndpointChange, type EndpointHooks, endpointChange } from "./endpoint-change.ts";
import { endpointChecks } from "./endpoint-checks.ts";
import { destinationChecks } from "./endpoint-destination.ts";
import { endpointKeys } from "./endpoint-keys.ts";
import type { EndpointFilter } from "./ports/endpoints.ts";
import type { Page, PageRequest, Scope } from "./ports/paging.ts";

export interface EndpointInput {
  /** The HTTPS endpoint's URL; absent for a broker destination (its address is derived). */
  url?: string | undefined;
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
  /** A client certificate and key to present to the receiver (mutual TLS); null or absent: none. */
  clientCertificate?: ClientCertificateInput | null | undefined;
  /** A Kafka, RabbitMQ or SQS destination, credentials in plain text (ADR 27); null or absent: HTTPS. */
  destination?: BrokerDestination<string> | null | undefined;
}

/**
 * An endpoint together with what its receiver verifies with, just issued (creation, rotation): for an
 * HMAC scheme the plain `whsec_` secret, shown once; for an Ed25519 endpoint its public key (`whpk_`,
 * readable at any time too), never the private key.
 */
export interface EndpointWithSecret {
  endpoint: Endpoint;
  secret: string;
}

/** Registering, reading, changing and removing endpoints. */
export function endpointUseCases(deps: AppDeps, hooks: EndpointHooks = {}) {
  const { repos, clock, ids } = deps;
  const checks = endpointChecks(deps);
  const { checkInput, changedHeaders, readCertificate, checkRateLimit, checkFilter } = checks;
  const keys = endpointKeys(deps);
  const { issueKey } = keys;

  const mustGet = async (scope: Scope, id: string) => {
    const e = await repos.endpoints.get(scope, id);
    if (!e) throw notFound("The endpoint");
    return e;
  };

  const destinations = destinationChecks(deps);
  const applyChange = endpointChange(deps, hooks, { ...checks, destinations }, keys, mustGet);

  return {
    /** `listenSession`: the URL is the `listen://` one the listen-session API made (ADR 29), not checked as an address. */
    async create(scope: Scope, input: EndpointInput, listenSession = false): Promise<EndpointWithSecret> {
      const broker = input.destination ?? null;
      if (!broker && input.url === undefined) throw invalid([{ path: "url", message: "is required" }]);
      checkInput(broker || listenSession ? undefined : input.url, input.headers);
      checkFilter(input.filter, input.events);
      checkRateLimit(input.rateLimit);
      const headers = await changedHeaders([], input.headers ?? {});
      const destination =
        broker &&
        (await destinations.create(
          broker,
          headers.map((h) => h.name),
          { url: input.url, clientCertificate: !!input.clientCertificate },
        ));
      const url = destination?.url ?? input.url!;
      const now = clock.now();
      const signatureScheme = input.signatureScheme ?? DEFAULT_SIGNATURE_SCHEME;
      const clientCertificate = input.clientCertificate
        ? await readCertificate(input.clientCertificate, url)
        : null;
      const key = await issueKey(keyKind(signatureScheme));
      const endpoint: Endpoint = {
        id: ids.uuid(),
        tenantId: scope.tenantId,
        projectId: scope.projectId,
        url,
        events: input.events,
        description: input.description ?? null,
        enabled: true,
        disabledReason: null,
        secrets: [{ sealed: key.sealed, expiresAt: null }],
        // Kept to the millisecond so lists stay newest first within a second; the API shows it to the second.
        createdAt: now,
        updatedAt: now,
        failingSince: null,
        failingNotice: null,
        disabledAt: null,
        disabledNotice: null,
        headers,
        signatureScheme,
        filter: input.filter ?? null,
        rateLimit: input.rateLimit ?? null,
        ordering: input.ordering ?? "none",
        clientCertificate,
        destination: destination?.destination ?? null,
      };
      await repos.endpoints.insert(endpoint);
      return { endpoint, secret: key.shown };
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

    publicKeys: keys.publicKeys,

    async update(scope: Scope, id: string, change: EndpointChange): Promise<Endpoint> {
      return (await applyChange(scope, id, change)).endpoint;
    },

    change: applyChange,

    async rotate(scope: Scope, id: string, gracePeriodSeconds: number): Promise<EndpointWithSecret> {
      const current = await mustGet(scope, id);
      const now = clock.now();
      const key = await issueKey(keyKind(current.signatureScheme));
      const secrets = rotateSecrets(current.secrets, key.sealed, gracePeriodSeconds * 1000, now);
      // The scheme is written with the keys it was read with, so a change of scheme racing this
      // rotation leaves an endpoint whose keys are of its scheme's kind, whichever write lands last.
      const updated = await repos.endpoints.update(scope, id, {
        secrets,
        signatureScheme: current.signatureScheme,
        updatedAt: now,
      });
      if (!updated) throw notFound("The endpoint");
      return { endpoint: updated, secret: key.shown };
    },

    async enable(scope: Scope, id: string): Promise<Endpoint> {
      const current = await mustGet(scope, id);
      const on = enableEndpoint(current, clock.now());
      const updated = await repos.endpoints.update(scope, id, {
        enabled: on.enabled,
        disabledReason: on.disabledReason,
        failingSince: on.failingSince,
        disabledAt: on.disabledAt,
        disabledNotice: on.disabledNotice,
        updatedAt: on.updatedAt,
      });
      if (!updated) throw notFound("The endpoint");
      return updated;
    },

    /** Removes the endpoint, then cancels what was still owed to it (the dispatcher also drops deliveries of a missing endpoint). */
    async remove(scope: Scope, id: string): Promise<void> {
      const removed = await repos.endpoints.delete(scope, id);
      if (!removed) throw notFound("The endpoint");
      // A producer or channel this process pools for it is closed now (its kind is no longer known).
      hooks.released?.(id);
      await repos.deliveries.cancelPending(scope, id);
    },
  };
}

export type EndpointUseCases = ReturnType<typeof endpointUseCases>;
