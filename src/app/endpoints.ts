import {
  type ClientCertificateInput,
  certificateBlocks,
  clientCertificateShapeIssues,
  clientCertificateTimeIssues,
  privateKeyBlock,
  type StoredClientCertificate,
} from "../domain/client-certificate.ts";
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
import {
  DEFAULT_SIGNATURE_SCHEME,
  type KeyKind,
  keyKind,
  type SignatureScheme,
} from "../domain/signature-scheme.ts";
import { newEndpointSecret } from "../domain/signing.ts";
import { ed25519PublicKey, newEd25519Secret } from "../domain/standard-webhooks-ed25519.ts";
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
  /** A client certificate and key to present to the receiver (mutual TLS); null or absent: none. */
  clientCertificate?: ClientCertificateInput | null | undefined;
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
  /** A new client certificate and key (replacing any); null removes it; absent keeps it. */
  clientCertificate?: ClientCertificateInput | null | undefined;
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

/** An endpoint after a change, and what its receiver verifies with when the change issued a key. */
export interface ChangedEndpoint {
  endpoint: Endpoint;
  secret: string | null;
}

const PUBLIC_KEY_CACHE_LIMIT = 10_000;

/** What the endpoint use cases tell the rest of the process. */
export interface EndpointHooks {
  /** An endpoint was just disabled by hand: its endpoint.disabled event is due (ADR 20). */
  disabled?(endpointId: string): void;
}

/** Registering, reading, changing and removing endpoints. */
export function endpointUseCases(deps: AppDeps, hooks: EndpointHooks = {}) {
  const { repos, clock, ids, cipher } = deps;

  /**
   * A new signing key of a kind, plain and sealed, and what the receiver verifies with: an HMAC
   * secret is both; an Ed25519 key (sealed as `whsk_ed25519_…`, like a secret) shows its public key.
   */
  const issueKey = async (kind: KeyKind) => {
    const plain =
      kind === "ed25519" ? newEd25519Secret(ids.randomBytes(32)) : newEndpointSecret(ids.randomBytes(32));
    const shown = kind === "ed25519" ? await ed25519PublicKey(plain) : plain;
    return { sealed: await cipher.seal(plain), shown };
  };

  // A sealed text always opens to the same key, so its public key is kept (it is public).
  const publicKeyOf = new Map<string, Promise<string>>();
  const publicKey = (sealed: string) => {
    let key = publicKeyOf.get(sealed);
    if (!key) {
      if (publicKeyOf.size >= PUBLIC_KEY_CACHE_LIMIT) publicKeyOf.clear();
      key = cipher.open(sealed).then(ed25519PublicKey);
      key.catch(() => publicKeyOf.delete(sealed));
      publicKeyOf.set(sealed, key);
    }
    return key;
  };

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

  /**
   * A client certificate checked and ready to store (ADR 22): PEM shape, the certificate and key read
   * (an encrypted key decrypted with its passphrase), the key matching the certificate, valid now, and
   * an https:// URL to present it on. The key is sealed like a secret; the passphrase is not kept.
   */
  const readCertificate = async (
    input: ClientCertificateInput,
    url: string,
  ): Promise<StoredClientCertificate> => {
    const path = "client_certificate";
    const shape = clientCertificateShapeIssues(input, path);
    if (shape.length) throw invalid(shape);
    if (!url.startsWith("https://"))
      throw invalid([
        { path, message: "needs an https:// endpoint URL: it is presented in the TLS handshake" },
      ]);
    // Only the PEM blocks are read and kept (shape checked above: one key, at least one certificate).
    const read = deps.certificates.read(
      { ...input, privateKey: privateKeyBlock(input.privateKey) ?? input.privateKey },
      path,
    );
    if (!read.ok) throw invalid(read.issues);
    const time = clientCertificateTimeIssues(read.facts, clock.now(), path);
    if (time.length) throw invalid(time);
    return {
      ...read.facts,
      certificate: `${certificateBlocks(input.certificate).join("\n")}\n`,
      sealedKey: await cipher.seal(read.privateKey),
    };
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

  /**
   * Changes an endpoint. A switch of scheme between key kinds (HMAC and Ed25519) issues a key of the
   * new kind in the same write and drops the old keys at once, grace periods included: they cannot
   * sign under the new scheme. What the receiver verifies with is returned, as by a rotation.
   */
  const applyChange = async (scope: Scope, id: string, change: EndpointChange): Promise<ChangedEndpoint> => {
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
    return { endpoint: updated, secret };
  };

  return {
    async create(scope: Scope, input: EndpointInput): Promise<EndpointWithSecret> {
      checkInput(input.url, input.headers);
      checkFilter(input.filter, input.events);
      checkRateLimit(input.rateLimit);
      const headers = await changedHeaders([], input.headers ?? {});
      const now = clock.now();
      const signatureScheme = input.signatureScheme ?? DEFAULT_SIGNATURE_SCHEME;
      const clientCertificate = input.clientCertificate
        ? await readCertificate(input.clientCertificate, input.url)
        : null;
      const key = await issueKey(keyKind(signatureScheme));
      const endpoint: Endpoint = {
        id: ids.uuid(),
        tenantId: scope.tenantId,
        projectId: scope.projectId,
        url: input.url,
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

    /**
     * The public key (`whpk_…`) of each Ed25519 endpoint: its current key's; HMAC endpoints have none.
     * Derived from the sealed private key, so nothing but the key itself is stored (ADR 13).
     */
    async publicKeys(endpoints: readonly Endpoint[]): Promise<Map<string, string>> {
      const found = await Promise.all(
        endpoints
          .filter((e) => keyKind(e.signatureScheme) === "ed25519")
          .map(async (e) => {
            const current = e.secrets.find((s) => s.expiresAt === null) ?? e.secrets[0];
            return current ? ([e.id, await publicKey(current.sealed)] as const) : null;
          }),
      );
      return new Map(found.filter((x) => x !== null));
    },

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
      await repos.deliveries.cancelPending(scope, id);
    },
  };
}

export type EndpointUseCases = ReturnType<typeof endpointUseCases>;
