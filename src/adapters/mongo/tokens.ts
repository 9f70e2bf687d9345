import type { Collection } from "mongodb";
import type { TokenRecord, TokenRepository } from "../../app/ports/tokens.ts";
import type { TokenDoc } from "./documents.ts";
import { tokenFromDoc, tokenToDoc } from "./mappers.ts";

export class MongoTokens implements TokenRepository {
  constructor(private readonly col: Collection<TokenDoc>) {}

  async insert(token: TokenRecord): Promise<void> {
    await this.col.insertOne(tokenToDoc(token));
  }

  async findByHash(hash: string): Promise<TokenRecord | null> {
    const doc = await this.col.findOne({ hash });
    return doc ? tokenFromDoc(doc) : null;
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
