import type { ClientCertificateInput } from "../domain/client-certificate.ts";
import type { DestinationKind } from "../domain/destination.ts";
import type { DestinationPatch } from "../domain/destination-values.ts";
import { disableEndpoint, type Endpoint, enableEndpoint, type Ordering } from "../domain/endpoint.ts";
import { invalid, notFound } from "../domain/errors.ts";
import type { EventType } from "../domain/event-catalog.ts";
import type { EventFilter } from "../domain/event-filter.ts";
import { filterIssues } from "../domain/event-filter-compile.ts";
import { listenSessionKey } from "../domain/listen-url.ts";
import type { RateLimit } from "../domain/rate-limit.ts";
import { keyKind, type SignatureScheme } from "../domain/signature-scheme.ts";
import type { AppDeps } from "./deps.ts";
import type { EndpointChecks } from "./endpoint-checks.ts";
import type { DestinationChecks } from "./endpoint-destination.ts";
import type { EndpointKeys } from "./endpoint-keys.ts";
import type { EndpointPatch } from "./ports/endpoints.ts";
import type { Scope } from "./ports/paging.ts";

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
  /** A new client certificate and key (replacing any); null removes it; absent keeps it. */
  clientCertificate?: ClientCertificateInput | null | undefined;
  /** Must be the endpoint's own kind when given: a kind never changes (ADR 27). */
  kind?: DestinationKind | undefined;
  /** A merge patch of a broker destination (credentials in plain text); absent keeps it. */
  destination?: DestinationPatch | undefined;
}

/** An endpoint after a change, and what its receiver verifies with when the change issued a key. */
export interface ChangedEndpoint {
  endpoint: Endpoint;
  secret: string | null;
}

/** What the endpoint use cases tell the rest of the process. */
export interface EndpointHooks {
  /** An endpoint was just disabled by hand: its endpoint.disabled event is due (ADR 20). */
  disabled?(endpointId: string): void;
  /**
   * An endpoint was changed, disabled or deleted: a producer or channel this process pools for its broker
   * destination is closed (ADR 27); others see its newer `updatedAt` at their next attempt.
   */
  released?(endpointId: string): void;
}

/**
 * Changes an endpoint. A switch of scheme between key kinds (HMAC and Ed25519) issues a key of the
 * new kind in the same write and drops the old keys at once, grace periods included: they cannot
 * sign under the new scheme. What the receiver verifies with is returned, as by a rotation.
 */
export function endpointChange(
  deps: AppDeps,
  hooks: EndpointHooks,
  checks: EndpointChecks & { destinations: DestinationChecks },
  keys: EndpointKeys,
  mustGet: (scope: Scope, id: string) => Promise<Endpoint>,
) {
  const { repos, clock } = deps;
  const { checkInput, changedHeaders, readCertificate, checkRateLimit, checkFilter } = checks;
  const { issueKey } = keys;
  return async (scope: Scope, id: string, change: EndpointChange): Promise<ChangedEndpoint> => {
    // A listen session's own URL sent back unchanged (the console's form) is no change (ADR 29).
    const keepsListenUrl = change.url !== undefined && listenSessionKey(change.url) !== null;
    checkInput(keepsListenUrl ? undefined : change.url, change.headers);
    checkRateLimit(change.rateLimit);
    const current = await mustGet(scope, id);
    if (current.destination !== null && change.url !== undefined)
      throw invalid([
        {
          path: "url",
          message: `is derived from the ${current.destination.kind} destination; change the ${current.destination.kind} object instead`,
        },
      ]);
    if (keepsListenUrl && change.url !== current.url) checkInput(change.url, undefined);
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
    // Checked before anything is read or sealed: a refused change does no work.
    if (
      change.url?.startsWith("http://") &&
      change.clientCertificate === undefined &&
      current.clientCertificate !== null
    ) {
      throw invalid([
        {
          path: "url",
          message:
            "must be https:// while the endpoint has a client certificate (remove it with client_certificate: null in the same request)",
        },
      ]);
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
      clientCertificate: change.clientCertificate
        ? await readCertificate(change.clientCertificate, change.url ?? current.url)
        : change.clientCertificate,
    };
    const destination = await checks.destinations.change(
      current,
      change.kind,
      change.destination,
      patch.headers?.map((h) => h.name),
      { url: undefined, clientCertificate: !!change.clientCertificate },
    );
    if (destination) Object.assign(patch, { destination: destination.destination, url: destination.url });
    let secret: string | null = null;
    const kind = change.signatureScheme === undefined ? undefined : keyKind(change.signatureScheme);
    if (kind !== undefined && kind !== keyKind(current.signatureScheme)) {
      const key = await issueKey(kind);
      patch.secrets = [{ sealed: key.sealed, expiresAt: null }];
      secret = key.shown;
    }
    if (change.enabled === true && !current.enabled) {
      const on = enableEndpoint(current, now);
      Object.assign(patch, {
        enabled: on.enabled,
        disabledReason: on.disabledReason,
        failingSince: on.failingSince,
        disabledAt: on.disabledAt,
        disabledNotice: on.disabledNotice,
      });
    } else if (change.enabled === false && current.enabled) {
      const off = disableEndpoint(current, "manual", now);
      Object.assign(patch, {
        enabled: off.enabled,
        disabledReason: off.disabledReason,
        disabledAt: off.disabledAt,
        disabledNotice: off.disabledNotice,
      });
    }
    const updated = await repos.endpoints.update(scope, id, patch);
    if (!updated) throw notFound("The endpoint");
    // Its endpoint.disabled event goes out now; the maintenance job sends it if this process dies first.
    if (patch.enabled === false) hooks.disabled?.(updated.id);
    if (updated.destination !== null) hooks.released?.(updated.id);
    return { endpoint: updated, secret };
  };
}
