// Storage of API tokens and idempotency keys.
export interface TokenRecord {
  id: string;
  /** SHA-256 hex of the token; the token itself is never stored. */
  hash: string;
  /** The first characters of the token, to recognise it in a list. */
  prefix: string;
  tenantId: string;
  projectId: string;
  name: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface TokenRepository {
  insert(token: TokenRecord): Promise<void>;
  findByHash(hash: string): Promise<TokenRecord | null>;
  list(): Promise<TokenRecord[]>;
  /** Revokes by id; false when absent or already revoked. */
  revoke(id: string, at: Date): Promise<boolean>;
  count(): Promise<number>;
}

export interface IdempotencyRecord {
  scopeKey: string;
  eventId: string;
  fingerprint: string;
  createdAt: Date;
}

export interface IdempotencyRepository {
  /**
   * Stores the record unless one for the same scope key, newer than `notBefore`, exists;
   * returns the record that holds (the new one, or the earlier one).
   */
  reserve(record: IdempotencyRecord, notBefore: Date): Promise<IdempotencyRecord>;
  /** The record holding this scope key, if one not older than `notBefore` exists; a read, it writes nothing. */
  find(scopeKey: string, notBefore: Date): Promise<IdempotencyRecord | null>;
  /** Deletes records created before `before`; returns how many. */
  deleteCreatedBefore(before: Date): Promise<number>;
  /** Deletes the records that answer with these events (erased events must not be re-created by a repeat). */
  deleteForEvents(eventIds: readonly string[]): Promise<number>;
}
