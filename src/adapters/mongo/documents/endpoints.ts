import type { EndpointPatch } from "../../../app/ports/endpoints.ts";
import type { StoredClientCertificate } from "../../../domain/client-certificate.ts";
import type {
  DisabledReason,
  Endpoint,
  Ordering,
  StoredHeader,
  StoredSecret,
} from "../../../domain/endpoint.ts";
import type { EventType } from "../../../domain/event-catalog.ts";
import type { EventFilter } from "../../../domain/event-filter.ts";
import type { RateLimit } from "../../../domain/rate-limit.ts";
import { DEFAULT_SIGNATURE_SCHEME, type SignatureScheme } from "../../../domain/signature-scheme.ts";
import {
  type ClientCertificateRecord,
  fromCertificateRecord,
  toCertificateRecord,
} from "../../client-certificate-record.ts";
import {
  type DestinationRecord,
  fromDestinationRecord,
  toDestinationRecord,
} from "../../destination-record.ts";

export interface SecretDoc {
  sealed: string;
  expires_at: Date | null;
}

export interface HeaderDoc {
  name: string;
  sealed: string;
}

export interface EndpointDoc {
  _id: string;
  tenant_id: string;
  project_id: string;
  url: string;
  events: EventType[];
  description: string | null;
  enabled: boolean;
  disabled_reason: DisabledReason | null;
  secrets: SecretDoc[];
  created_at: Date;
  updated_at: Date;
  failing_since: Date | null;
  // Absent on endpoints written before custom headers and signature schemes: none, herald-v1.
  headers?: HeaderDoc[];
  signature_scheme?: SignatureScheme;
  /** The payload filter as JSON text (its keys hold $ and dots); absent or null: none. */
  filter?: string | null;
  /** Exactly one of the two; absent on endpoints stored before rate limits existed (ADR 16). */
  rate_limit?: RateLimitDoc | null;
  /** Absent on endpoints stored before ordering existed: "none". */
  ordering?: Ordering;
  // Operational events (ADR 20); absent on endpoints stored before them: null.
  failing_notice?: Date | null;
  disabled_at?: Date | null;
  disabled_notice?: Date | null;
  /** Mutual TLS (ADR 22); absent on endpoints stored before it existed: none. */
  client_certificate?: ClientCertificateDoc | null;
  /** A broker destination (ADR 27), credentials sealed; absent on endpoints stored before it: HTTPS. */
  destination?: DestinationRecord | null;
}

/** A client certificate: the PEM chain and its facts in clear, the private key sealed; its times BSON dates. */
export type ClientCertificateDoc = ClientCertificateRecord<Date>;

export type RateLimitDoc = { per_second: number } | { per_minute: number };

const secretToDoc = (s: StoredSecret): SecretDoc => ({ sealed: s.sealed, expires_at: s.expiresAt });
const secretFromDoc = (s: SecretDoc): StoredSecret => ({ sealed: s.sealed, expiresAt: s.expires_at });
const headerToDoc = (h: StoredHeader): HeaderDoc => ({ name: h.name, sealed: h.sealed });
const headerFromDoc = (h: HeaderDoc): StoredHeader => ({ name: h.name, sealed: h.sealed });
// Stored as text: a filter's keys start with $ and hold dots, which stores treat as operators and paths.
const filterToDoc = (f: EventFilter | null): string | null => (f === null ? null : JSON.stringify(f));
const rateLimitToDoc = (l: RateLimit | null): RateLimitDoc | null =>
  l === null ? null : l.per === "second" ? { per_second: l.count } : { per_minute: l.count };
const rateLimitFromDoc = (d: RateLimitDoc | null | undefined): RateLimit | null =>
  !d
    ? null
    : "per_second" in d
      ? { count: d.per_second, per: "second" }
      : { count: d.per_minute, per: "minute" };

const asDate = (d: Date) => d;
const certificateToDoc = (c: StoredClientCertificate | null): ClientCertificateDoc | null =>
  c && toCertificateRecord(c, asDate);
const certificateFromDoc = (d: ClientCertificateDoc | null | undefined): StoredClientCertificate | null =>
  d ? fromCertificateRecord(d, asDate) : null;

export function endpointToDoc(e: Endpoint): EndpointDoc {
  return {
    _id: e.id,
    tenant_id: e.tenantId,
    project_id: e.projectId,
    url: e.url,
    events: [...e.events],
    description: e.description,
    enabled: e.enabled,
    disabled_reason: e.disabledReason,
    secrets: e.secrets.map(secretToDoc),
    created_at: e.createdAt,
    updated_at: e.updatedAt,
    failing_since: e.failingSince,
    headers: e.headers.map(headerToDoc),
    signature_scheme: e.signatureScheme,
    filter: filterToDoc(e.filter),
    rate_limit: rateLimitToDoc(e.rateLimit),
    ordering: e.ordering,
    failing_notice: e.failingNotice,
    disabled_at: e.disabledAt,
    disabled_notice: e.disabledNotice,
    client_certificate: certificateToDoc(e.clientCertificate),
    destination: e.destination && toDestinationRecord(e.destination),
  };
}

export function endpointFromDoc(d: EndpointDoc): Endpoint {
  return {
    id: d._id,
    tenantId: d.tenant_id,
    projectId: d.project_id,
    url: d.url,
    events: d.events,
    description: d.description,
    enabled: d.enabled,
    disabledReason: d.disabled_reason,
    secrets: d.secrets.map(secretFromDoc),
    createdAt: d.created_at,
    updatedAt: d.updated_at,
    failingSince: d.failing_since,
    headers: (d.headers ?? []).map(headerFromDoc),
    signatureScheme: d.signature_scheme ?? DEFAULT_SIGNATURE_SCHEME,
    filter: d.filter ? (JSON.parse(d.filter) as EventFilter) : null,
    rateLimit: rateLimitFromDoc(d.rate_limit),
    ordering: d.ordering ?? "none",
    failingNotice: d.failing_notice ?? null,
    disabledAt: d.disabled_at ?? null,
    disabledNotice: d.disabled_notice ?? null,
    clientCertificate: certificateFromDoc(d.client_certificate),
    destination: d.destination ? fromDestinationRecord(d.destination) : null,
  };
}

/** The $set of an endpoint patch; absent (undefined) fields are left out, null is written. */
export function endpointPatchToSet(p: EndpointPatch): Partial<EndpointDoc> {
  const set: Partial<EndpointDoc> = { updated_at: p.updatedAt };
  if (p.url !== undefined) set.url = p.url;
  if (p.events !== undefined) set.events = [...p.events];
  if (p.description !== undefined) set.description = p.description;
  if (p.enabled !== undefined) set.enabled = p.enabled;
  if (p.disabledReason !== undefined) set.disabled_reason = p.disabledReason;
  if (p.secrets !== undefined) set.secrets = p.secrets.map(secretToDoc);
  if (p.failingSince !== undefined) set.failing_since = p.failingSince;
  if (p.disabledAt !== undefined) set.disabled_at = p.disabledAt;
  if (p.disabledNotice !== undefined) set.disabled_notice = p.disabledNotice;
  if (p.headers !== undefined) set.headers = p.headers.map(headerToDoc);
  if (p.signatureScheme !== undefined) set.signature_scheme = p.signatureScheme;
  if (p.filter !== undefined) set.filter = filterToDoc(p.filter);
  if (p.rateLimit !== undefined) set.rate_limit = rateLimitToDoc(p.rateLimit);
  if (p.ordering !== undefined) set.ordering = p.ordering;
  if (p.clientCertificate !== undefined) set.client_certificate = certificateToDoc(p.clientCertificate);
  if (p.destination !== undefined) set.destination = p.destination && toDestinationRecord(p.destination);
  return set;
}
