import type { IdempotencyRecord, IdempotencyRepository } from "../../app/ports/tokens.ts";
import { copy } from "./copies.ts";

export class MemoryIdempotency implements IdempotencyRepository {
  readonly rows = new Map<string, IdempotencyRecord>();

  async reserve(record: IdempotencyRecord, notBefore: Date): Promise<IdempotencyRecord> {
    const held = this.rows.get(record.scopeKey);
    if (held && held.createdAt.getTime() >= notBefore.getTime()) return copy(held);
    this.rows.set(record.scopeKey, copy(record));
    return copy(record);
  }

  async find(scopeKey: string, notBefore: Date): Promise<IdempotencyRecord | null> {
    const held = this.rows.get(scopeKey);
    return held && held.createdAt.getTime() >= notBefore.getTime() ? copy(held) : null;
  }

  async deleteCreatedBefore(before: Date): Promise<number> {
    let n = 0;
    for (const [key, r] of this.rows) {
      if (r.createdAt.getTime() < before.getTime()) {
        this.rows.delete(key);
        n++;
      }
    }
    return n;
  }

  async deleteForEvents(eventIds: readonly string[]): Promise<number> {
    const events = new Set(eventIds);
    let n = 0;
    for (const [key, r] of this.rows) {
      if (events.has(r.eventId)) {
        this.rows.delete(key);
        n++;
      }
    }
    return n;
  }
}
