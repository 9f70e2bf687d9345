// API tokens and idempotency keys as their tables hold them (the ports' tokens.ts holds both).
import type { IdempotencyRecord, TokenRecord } from "../../../app/ports/tokens.ts";

export interface TokenRow {
  id: string;
  hash: string;
  prefix: string;
  tenant_id: string;
  project_id: string;
  name: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

export const tokenFromRow = (r: TokenRow): TokenRecord => ({
  id: r.id,
  hash: r.hash,
  prefix: r.prefix,
  tenantId: r.tenant_id,
  projectId: r.project_id,
  name: r.name,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

export const tokenToRow = (t: TokenRecord): TokenRow => ({
  id: t.id,
  hash: t.hash,
  prefix: t.prefix,
  tenant_id: t.tenantId,
  project_id: t.projectId,
  name: t.name,
  created_at: t.createdAt,
  revoked_at: t.revokedAt,
});

export interface IdempotencyRow {
  scope_key: string;
  event_id: string;
  fingerprint: string;
  created_at: Date;
}

export const idempotencyFromRow = (r: IdempotencyRow): IdempotencyRecord => ({
  scopeKey: r.scope_key,
  eventId: r.event_id,
  fingerprint: r.fingerprint,
  createdAt: r.created_at,
});

export const idempotencyToRow = (r: IdempotencyRecord): IdempotencyRow => ({
  scope_key: r.scopeKey,
  event_id: r.eventId,
  fingerprint: r.fingerprint,
  created_at: r.createdAt,
});
