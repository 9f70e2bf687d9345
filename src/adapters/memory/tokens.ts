import type { TokenRecord, TokenRepository } from "../../app/ports/tokens.ts";
import { copy, flat } from "./copies.ts";

export class MemoryTokens implements TokenRepository {
  readonly rows = new Map<string, TokenRecord>();

  async insert(token: TokenRecord): Promise<void> {
    this.rows.set(token.id, flat(token));
  }

  async findByHash(hash: string): Promise<TokenRecord | null> {
    for (const t of this.rows.values()) if (t.hash === hash) return flat(t);
    return null;
  }

  async list(): Promise<TokenRecord[]> {
    return [...this.rows.values()].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()).map(copy);
  }

  async revoke(id: string, at: Date): Promise<boolean> {
    const t = this.rows.get(id);
    if (!t || t.revokedAt) return false;
    t.revokedAt = new Date(at);
    return true;
  }

  async count(): Promise<number> {
    return this.rows.size;
  }
}
