import type { TokenRecord } from "../../../app/ports/tokens.ts";

export interface TokenDoc {
  _id: string;
  hash: string;
  prefix: string;
  tenant_id: string;
  project_id: string;
  name: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

export function tokenToDoc(t: TokenRecord): TokenDoc {
  return {
    _id: t.id,
    hash: t.hash,
    prefix: t.prefix,
    tenant_id: t.tenantId,
    project_id: t.projectId,
    name: t.name,
    created_at: t.createdAt,
    revoked_at: t.revokedAt,
  };
}

export function tokenFromDoc(d: TokenDoc): TokenRecord {
  return {
    id: d._id,
    hash: d.hash,
    prefix: d.prefix,
    tenantId: d.tenant_id,
    projectId: d.project_id,
    name: d.name,
    createdAt: d.created_at,
    revokedAt: d.revoked_at,
  };
}
