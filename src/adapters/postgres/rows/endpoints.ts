// An endpoint as the `endpoints` table holds it; secrets, headers and the certificate as jsonb.
import type { Sql } from "postgres";
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
import type { SignatureScheme } from "../../../domain/signature-scheme.ts";
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
import { OID } from "./arrays.ts";

/** A secret as the `secrets` jsonb array holds it. */
type SecretJson = {
  sealed: string;
  expires_at: string | null;
};

export interface EndpointRow {
  id: string;
  tenant_id: string;
  project_id: string;
  url: string;
  events: EventType[];
  description: string | null;
  enabled: boolean;
  disabled_reason: DisabledReason | null;
  secrets: SecretJson[];
  created_at: Date;
  updated_at: Date;
  failing_since: Date | null;
  failing_notice: Date | null;
  disabled_at: Date | null;
  disabled_notice: Date | null;
  headers: StoredHeader[];
  signature_scheme: SignatureScheme;
  /** The payload filter as the JSON text given (its keys hold $ and dots; text keeps their order). */
  filter: string | null;
  rate_limit: RateLimit | null;
  ordering: Ordering;
  /** Migration 0004; null for none. */
  client_certificate: ClientCertificateJson | null;
  /** Migration 0008: "https" or the destination's kind, and the destination (credentials sealed) or null. */
  kind: string;
  destination: DestinationRecord | null;
}

/** A client certificate as jsonb (ADR 22): the PEM chain and its facts in clear, the key sealed. */
type ClientCertificateJson = ClientCertificateRecord<string>;

export function endpointFromRow(r: EndpointRow): Endpoint {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    projectId: r.project_id,
    url: r.url,
    events: r.events,
    description: r.description,
    enabled: r.enabled,
    disabledReason: r.disabled_reason,
    secrets: r.secrets.map((s) => ({
      sealed: s.sealed,
      expiresAt: s.expires_at === null ? null : new Date(s.expires_at),
    })),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    failingSince: r.failing_since,
    failingNotice: r.failing_notice,
    disabledAt: r.disabled_at,
    disabledNotice: r.disabled_notice,
    headers: r.headers.map((h) => ({ name: h.name, sealed: h.sealed })),
    signatureScheme: r.signature_scheme,
    filter: r.filter === null ? null : (JSON.parse(r.filter) as EventFilter),
    rateLimit: r.rate_limit && { count: r.rate_limit.count, per: r.rate_limit.per },
    ordering: r.ordering,
    clientCertificate:
      r.client_certificate && fromCertificateRecord(r.client_certificate, (t) => new Date(t)),
    destination: r.destination && fromDestinationRecord(r.destination),
  };
}

const secretsJson = (secrets: readonly StoredSecret[]): SecretJson[] =>
  secrets.map((s) => ({ sealed: s.sealed, expires_at: s.expiresAt?.toISOString() ?? null }));
const headersJson = (headers: readonly StoredHeader[]) =>
  headers.map((h) => ({ name: h.name, sealed: h.sealed }));
const rateLimitJson = (l: RateLimit | null) => l && { count: l.count, per: l.per };
const certificateJson = (c: StoredClientCertificate): ClientCertificateJson =>
  toCertificateRecord(c, (d) => d.toISOString());

/** A column's value as a parameter: jsonb, arrays and text columns typed so that nothing is inferred. */
type ColumnValue =
  | ReturnType<Sql["json"]>
  | ReturnType<Sql["array"]>
  | string
  | number
  | boolean
  | Date
  | null;

/**
 * The columns an endpoint patch sets (absent fields are left out, null is written), for
 * `UPDATE endpoints SET ${sql(set)}`; `updated_at` is always among them.
 */
export function endpointPatchColumns(sql: Sql, p: EndpointPatch): Record<string, ColumnValue> {
  const set: Record<string, ColumnValue> = { updated_at: p.updatedAt };
  if (p.url !== undefined) set.url = p.url;
  if (p.events !== undefined) set.events = sql.array([...p.events], OID.text);
  if (p.description !== undefined) set.description = p.description;
  if (p.enabled !== undefined) set.enabled = p.enabled;
  if (p.disabledReason !== undefined) set.disabled_reason = p.disabledReason;
  if (p.secrets !== undefined) set.secrets = sql.json(secretsJson(p.secrets));
  if (p.failingSince !== undefined) set.failing_since = p.failingSince;
  if (p.disabledAt !== undefined) set.disabled_at = p.disabledAt;
  if (p.disabledNotice !== undefined) set.disabled_notice = p.disabledNotice;
  if (p.headers !== undefined) set.headers = sql.json(headersJson(p.headers));
  if (p.signatureScheme !== undefined) set.signature_scheme = p.signatureScheme;
  if (p.filter !== undefined) set.filter = p.filter === null ? null : JSON.stringify(p.filter);
  if (p.rateLimit !== undefined)
    set.rate_limit = p.rateLimit === null ? null : sql.json(rateLimitJson(p.rateLimit));
  if (p.ordering !== undefined) set.ordering = p.ordering;
  if (p.clientCertificate !== undefined)
    set.client_certificate =
      p.clientCertificate === null ? null : sql.json(certificateJson(p.clientCertificate));
  // The kind never changes after creation (ADR 27), but is written with the destination that implies it.
  if (p.destination !== undefined) {
    set.kind = p.destination?.kind ?? "https";
    set.destination = p.destination === null ? null : sql.json(toDestinationRecord(p.destination));
  }
  return set;
}

/** Every column of a new endpoint, for `INSERT INTO endpoints ${sql(row)}`. */
export function endpointColumns(sql: Sql, e: Endpoint): Record<string, ColumnValue> {
  const { updated_at, ...patched } = endpointPatchColumns(sql, {
    url: e.url,
    events: e.events,
    description: e.description,
    enabled: e.enabled,
    disabledReason: e.disabledReason,
    secrets: e.secrets,
    failingSince: e.failingSince,
    disabledAt: e.disabledAt,
    disabledNotice: e.disabledNotice,
    headers: e.headers,
    signatureScheme: e.signatureScheme,
    filter: e.filter,
    rateLimit: e.rateLimit,
    ordering: e.ordering,
    clientCertificate: e.clientCertificate,
    destination: e.destination,
    updatedAt: e.updatedAt,
  });
  return {
    id: e.id,
    failing_notice: e.failingNotice,
    tenant_id: e.tenantId,
    project_id: e.projectId,
    created_at: e.createdAt,
    updated_at: updated_at ?? e.updatedAt,
    ...patched,
  };
}
