import type { Options, PostgresType, Sql } from "postgres";
import type { Repositories } from "../../app/ports/store.ts";
import { StoreUnavailableError } from "../../app/ports/store.ts";
import { openPostgres } from "./connection.ts";
import { PostgresDeliveries } from "./deliveries.ts";
import { PostgresEndpoints } from "./endpoints.ts";
import { PostgresErasures, PostgresSettings } from "./erasures.ts";
import { guarded, translate } from "./errors.ts";
import { PostgresEvents } from "./events.ts";
import { PostgresIdempotency } from "./idempotency.ts";
import { migrate } from "./migrate.ts";
import { PostgresShards } from "./shards.ts";
import { PostgresTokens } from "./tokens.ts";

/** How long a readiness ping may take before the database counts as not answering. */
export const PING_DEADLINE_MS = 3000;

/** The repositories over one database whose schema is up to date. Outages become StoreUnavailableError. */
export function createPostgresRepositories(sql: Sql): Repositories {
  const deliveries = new PostgresDeliveries(sql);
  return {
    endpoints: guarded(new PostgresEndpoints(sql)),
    events: guarded(new PostgresEvents(sql)),
    deliveries: guarded(deliveries),
    shards: guarded(new PostgresShards(sql)),
    tokens: guarded(new PostgresTokens(sql)),
    idempotency: guarded(new PostgresIdempotency(sql)),
    erasures: guarded(new PostgresErasures(sql)),
    settings: guarded(new PostgresSettings(sql)),
    async ping() {
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
    },
    async close() {
      await sql.end({ timeout: 5 });
    },
  };
}

export interface PostgresConnection {
  sql: Sql;
  repositories: Repositories;
}

/** Connects, applies the schema's migrations and builds the repositories; rejects with StoreUnavailableError when unreachable. */
export async function connectPostgres(
  url: string,
  options: Options<Record<string, PostgresType>> = {},
): Promise<PostgresConnection> {
  const sql = openPostgres(url, options);
  try {
    await migrate(sql);
    return { sql, repositories: createPostgresRepositories(sql) };
  } catch (e) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw translate(e);
  }
}
