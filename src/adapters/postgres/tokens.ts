import type { Sql } from "postgres";
import type { TokenRecord, TokenRepository } from "../../app/ports/tokens.ts";
import type { ReadCache } from "./read-cache.ts";
import { type TokenRow, tokenFromRow, tokenToRow } from "./rows/tokens.ts";

export class PostgresTokens implements TokenRepository {
  /** `cache` keeps found tokens between requests (ADR 18 says how long a revoke may take elsewhere). */
  private readonly sql: Sql;
  private readonly cache: ReadCache | null;
  constructor(sql: Sql, cache: ReadCache | null = null) {
    this.sql = sql;
    this.cache = cache;
  }

  async insert(token: TokenRecord): Promise<void> {
    await this.sql`INSERT INTO tokens ${this.sql(tokenToRow(token))}`;
    this.cache?.changed("tokens");
  }

  async findByHash(hash: string): Promise<TokenRecord | null> {
    const read = async () => {
      const [row] = await this.sql<TokenRow[]>`SELECT * FROM tokens WHERE hash = ${hash}`;
      return row ? tokenFromRow(row) : null;
    };
    // Unknown hashes are not kept: anyone can send them.
    return this.cache ? this.cache.through("tokens", hash, read, (t) => t !== null) : read();
  }

  async list(): Promise<TokenRecord[]> {
    const rows = await this.sql<TokenRow[]>`SELECT * FROM tokens ORDER BY created_at DESC, id DESC`;
    return rows.map(tokenFromRow);
  }

  async revoke(id: string, at: Date): Promise<boolean> {
    const r = await this.sql`UPDATE tokens SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`;
    // Revoking an unknown or revoked token changes nothing, and keeps the cache.
    if (r.count > 0) this.cache?.changed("tokens");
    return r.count === 1;
  }

  async count(): Promise<number> {
    const [row] = await this.sql<{ n: number }[]>`SELECT count(*)::integer AS n FROM tokens`;
    return row?.n ?? 0;
  }
}
