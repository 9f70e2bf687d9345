import type { IdempotencyRecord } from "../../../app/ports/tokens.ts";

export interface IdempotencyDoc {
  /** The scope key: one record per key. */
  _id: string;
  event_id: string;
  fingerprint: string;
  created_at: Date;
}

export function idempotencyToDoc(r: IdempotencyRecord): IdempotencyDoc {
  return { _id: r.scopeKey, event_id: r.eventId, fingerprint: r.fingerprint, created_at: r.createdAt };
}

export function idempotencyFromDoc(d: IdempotencyDoc): IdempotencyRecord {
  return { scopeKey: d._id, eventId: d.event_id, fingerprint: d.fingerprint, createdAt: d.created_at };
}
