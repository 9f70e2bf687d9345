import type { Collection } from "mongodb";
import type { TokenRecord, TokenRepository } from "../../app/ports/tokens.ts";
import { naturalBatch, PUBLISH_BATCHING } from "../natural-batch.ts";
import { type TokenDoc, tokenFromDoc, tokenToDoc } from "./documents/tokens.ts";

export class MongoTokens implements TokenRepository {
  private readonly col: Collection<TokenDoc>;
  constructor(col: Collection<TokenDoc>) {
    this.col = col;
  }

  async insert(token: TokenRecord): Promise<void> {
    await this.col.insertOne(tokenToDoc(token));
  }

  /** Every API request looks its token up; concurrent requests' lookups go as one read (natural-batch.ts). */
  private readonly findBatched = naturalBatch<string, TokenRecord | null>(async (hashes) => {
    const docs = await this.col.find({ hash: { $in: [...new Set(hashes)] } }).toArray();
    const byHash = new Map(docs.map((d) => [d.hash, d]));
    return hashes.map((h) => {
      const doc = byHash.get(h);
      return { ok: doc ? tokenFromDoc(doc) : null };
    });
  }, PUBLISH_BATCHING);

  async findByHash(hash: string): Promise<TokenRecord | null> {
    return this.findBatched(hash);
  }

  async list(): Promise<TokenRecord[]> {
    const docs = await this.col.find({}).sort({ created_at: -1, _id: -1 }).toArray();
    return docs.map(tokenFromDoc);
  }

  async revoke(id: string, at: Date): Promise<boolean> {
    const r = await this.col.updateOne({ _id: id, revoked_at: null }, { $set: { revoked_at: at } });
    return r.matchedCount === 1;
  }

  async count(): Promise<number> {
    return this.col.countDocuments({});
  }
}
