import type { Collection } from "mongodb";
import type { IdempotencyRecord, IdempotencyRepository } from "../../app/ports/tokens.ts";
import { type IdempotencyDoc, idempotencyFromDoc, idempotencyToDoc } from "./documents/idempotency.ts";
import { isDuplicateKey } from "./errors.ts";

/** Attempts of the upsert-or-read race before giving up (each loss means another writer just won). */
const ATTEMPTS = 3;

export class MongoIdempotency implements IdempotencyRepository {
  private readonly col: Collection<IdempotencyDoc>;
  constructor(col: Collection<IdempotencyDoc>) {
    this.col = col;
  }

  /**
   * One upsert that only matches an expired record: it writes a new key or replaces an expired one.
   * When a live record holds the key, the upsert's insert collides on _id and that record is read.
   */
  async reserve(record: IdempotencyRecord, notBefore: Date): Promise<IdempotencyRecord> {
    const { _id, ...fields } = idempotencyToDoc(record);
    let lastError: unknown;
    for (let i = 0; i < ATTEMPTS; i++) {
      try {
        const doc = await this.col.findOneAndUpdate(
          { _id, created_at: { $lt: notBefore } },
          { $set: fields },
          { upsert: true, returnDocument: "after" },
        );
        if (doc) return idempotencyFromDoc(doc);
      } catch (e) {
        if (!isDuplicateKey(e)) throw e;
        lastError = e;
      }
      const held = await this.col.findOne({ _id });
      if (held && held.created_at.getTime() >= notBefore.getTime()) return idempotencyFromDoc(held);
    }
    throw lastError ?? new Error(`idempotency key ${record.scopeKey} could not be reserved`);
  }

  async find(scopeKey: string, notBefore: Date): Promise<IdempotencyRecord | null> {
    const held = await this.col.findOne({ _id: scopeKey, created_at: { $gte: notBefore } });
    return held ? idempotencyFromDoc(held) : null;
  }

  async deleteCreatedBefore(before: Date): Promise<number> {
    return (await this.col.deleteMany({ created_at: { $lt: before } })).deletedCount;
  }

  async deleteForEvents(eventIds: readonly string[]): Promise<number> {
    if (eventIds.length === 0) return 0;
    // One equality statement per event, on the `event` index.
    const r = await this.col.bulkWrite(
      [...new Set(eventIds)].map((id) => ({ deleteMany: { filter: { event_id: id } } })),
      { ordered: false },
    );
    return r.deletedCount;
  }
}
