import type { Options, PostgresType, Sql } from "postgres";
import type { Repositories } from "../../app/ports/store.ts";
import { StoreUnavailableError } from "../../app/ports/store.ts";
import { openPostgres, renewablePostgres, typesKnown } from "./connection.ts";
import { PostgresDeliveries } from "./deliveries.ts";
import { PostgresDueSignals } from "./due-signals.ts";
import { PostgresEndpoints } from "./endpoints.ts";
import { PostgresErasures, PostgresSettings } from "./erasures.ts";
import { guarded, translate } from "./errors.ts";
import { PostgresEvents } from "./events.ts";
import { PostgresIdempotency } from "./idempotency.ts";
import { migrate } from "./migrate.ts";
import { ReadCache } from "./read-cache.ts";
import { PostgresShards } from "./shards.ts";
import { PostgresTokens } from "./tokens.ts";

/** How long a readiness ping may take before the database counts as not answering. */
export const PING_DEADLINE_MS = 3000;

/** The repositories over one database whose schema is up to date. Outages become StoreUnavailableError. */
export function createPostgresRepositories(
  sql: Sql,
  renewable?: { url: string; options: Options<Record<string, PostgresType>>; renew(): void },
  cache: ReadCache | null = null,
  sole = false,
): Repositories {
  const deliveries = new PostgresDeliveries(sql);
  // The proof of life's own connection (ADR 25): never idle-closed, never recycled (a new session has no lock).
  const lockClient = renewable
    ? () => openPostgres(renewable.url, { ...renewable.options, max: 1, idle_timeout: 0, max_lifetime: 0 })
    : null;
  const shards = new PostgresShards(sql, sole, lockClient);
  const pinged = renewable ? () => pingRenewing(sql, renewable) : () => ping(sql);
  return {
    endpoints: guarded(new PostgresEndpoints(sql, cache)),
    events: guarded(new PostgresEvents(sql)),
    deliveries: guarded(deliveries),
    shards: guarded(shards),
    tokens: guarded(new PostgresTokens(sql, cache)),
    idempotency: guarded(new PostgresIdempotency(sql)),
    erasures: guarded(new PostgresErasures(sql)),
    settings: guarded(new PostgresSettings(sql)),
    // Like the cache, for a long-running server: due work stored here is announced to its shards' owners.
    ...(cache ? { due: new PostgresDueSignals(sql, cache) } : {}),
    // The ping (every 5 s, and /readyz) also checks that the cache's notifications still arrive.
    ping: cache
      ? async () => {
          await pinged();
          await cache.check();
        }
      : pinged,
    async close() {
      cache?.close();
      await shards.closeLocks();
      await sql.end({ timeout: 5 });
    },
  };
}

/** Rejects with StoreUnavailableError unless `sql` answers within PING_DEADLINE_MS. */
async function ping(sql: Sql): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      sql`SELECT 1`,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new StoreUnavailableError()), PING_DEADLINE_MS);
      }),
    ]);
  } catch (e) {
    throw translate(e);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A ping that heals a silent pool: when the process's own connections do not answer but a brand-new one
 * does, the database is fine and only the pool's connections are dead (a partition that dropped their
 * packets), so the pool is renewed; the next ping, and every caller, uses fresh connections.
 */
async function pingRenewing(
  sql: Sql,
  renewable: { url: string; options: Options<Record<string, PostgresType>>; renew(): void },
): Promise<void> {
  try {
    await ping(sql);
  } catch (own) {
    const fresh = openPostgres(renewable.url, { ...renewable.options, max: 1 });
    try {
      await ping(fresh);
    } catch {
      throw own; // The database itself does not answer: an outage, not a dead pool.
    } finally {
      void fresh.end({ timeout: 0 }).catch(() => {});
    }
    renewable.renew();
    await ping(sql);
  }
}

export interface PostgresConnection {
  sql: Sql;
  repositories: Repositories;
  /** The tokens and fan-outs kept between publishes, when asked for; whoever writes those tables around the repositories clears it. */
  cache: ReadCache | null;
}

/**
 * Connects, applies the schema's migrations and builds the repositories; rejects with StoreUnavailableError
 * when unreachable. `cache: true` keeps tokens and each project's subscribed endpoints between requests,
 * kept right across processes by LISTEN/NOTIFY (ReadCache, ADR 18): for a long-running server on a
 * PostgreSQL server, not for the CLI's short runs or the embedded database's one session.
 */
export async function connectPostgres(
  url: string,
  options: Options<Record<string, PostgresType>> = {},
  herald: { cache?: boolean; sole?: boolean } = {},
): Promise<PostgresConnection> {
  const { sql, renew } = renewablePostgres(url, options);
  try {
    await migrate(sql);
    // The migration's connection learnt the server's array types: no later connection asks again.
    typesKnown(sql);
    const cache = herald.cache ? new ReadCache(sql) : null;
    await cache?.start();
    return {
      sql,
      cache,
      repositories: createPostgresRepositories(sql, { url, options, renew }, cache, herald.sole),
    };
  } catch (e) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw translate(e);
  }
}
