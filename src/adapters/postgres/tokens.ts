import type { Sql } from "postgres";
import type { TokenRecord, TokenRepository } from "../../app/ports/tokens.ts";
import { type TokenRow, tokenFromRow, tokenToRow } from "./rows.ts";

export class PostgresTokens implements TokenRepository {
  constructor(private readonly sql: Sql) {}

  async insert(token: TokenRecord): Promise<void> {
    await this.sql`INSERT INTO tokens ${this.sql(tokenToRow(token))}`;
  }

  async findByHash(hash: string): Promise<TokenRecord | null> {
    const [row] = await this.sql<TokenRow[]>`SELECT * FROM tokens WHERE hash = ${hash}`;
    return row ? tokenFromRow(row) : null;
  }

  async list(): Promise<TokenRecord[]> {
    const rows = await this.sql<TokenRow[]>`SELECT * FROM tokens ORDER BY created_at DESC, id DESC`;
    return rows.map(tokenFromRow);
  }

  async revoke(id: string, at: Date): Promise<boolean> {
    const r = await this.sql`UPDATE tokens SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`;
    return r.count === 1;
  }

  async count(): Promise<number> {
    const [row] = await this.sql<{ n: number }[]>`SELECT count(*)::integer AS n FROM tokens`;
    return row?.n ?? 0;
  }
}
