import type { ClientIdentity } from "../../app/ports/sending.ts";

// Connections that present a client certificate are pooled per identity (an endpoint's certificate
// and key), apart from every other connection (ADR 22); this keeps those pools, bounded.

/** How many identities keep a pool of their own at once; the least recently used one is closed beyond. */
export const IDENTITY_POOL_LIMIT = 1_000;

/** Something that holds connections and can be closed (an undici Agent, a Deno HttpClient). */
export interface Closable {
  close(): Promise<void>;
}

/**
 * One pool per client identity, made on first use and kept in least-recently-used order; beyond
 * `limit` the oldest is closed (an undici Agent finishes what it has in flight first).
 */
export class IdentityPools<P extends Closable> {
  private readonly pools = new Map<string, P>();

  private readonly make: (identity: ClientIdentity) => P;
  private readonly limit: number;
  constructor(make: (identity: ClientIdentity) => P, limit = IDENTITY_POOL_LIMIT) {
    this.make = make;
    this.limit = limit;
  }

  /** The pool of this identity. */
  get(identity: ClientIdentity): P {
    let pool = this.pools.get(identity.id);
    if (pool !== undefined) {
      this.pools.delete(identity.id);
    } else {
      pool = this.make(identity);
      if (this.pools.size >= this.limit) {
        const [oldest, old] = this.pools.entries().next().value as [string, P];
        this.pools.delete(oldest);
        void old.close().catch(() => {});
      }
    }
    this.pools.set(identity.id, pool);
    return pool;
  }

  get size(): number {
    return this.pools.size;
  }

  async close(): Promise<void> {
    const all = [...this.pools.values()];
    this.pools.clear();
    await Promise.allSettled(all.map((p) => p.close()));
  }
}
