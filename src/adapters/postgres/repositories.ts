import type { Options, PostgresType, Sql } from "postgres";
import type { Repositories } from "../../app/ports/store.ts";
import { stallWatch } from "../stall-watch.ts";
import { openPostgres, renewablePostgres, typesKnown } from "./connection.ts";
import { PostgresDeliveries } from "./deliveries.ts";
import { PostgresDueSignals } from "./due-signals.ts";
import { PostgresEndpoints } from "./endpoints.ts";
import { PostgresErasures, PostgresSettings } from "./erasures.ts";
import { guarded, isConnectionLost, translate } from "./errors.ts";
import { PostgresEvents } from "./events.ts";
import { PostgresIdempotency } from "./idempotency.ts";
import { migrate } from "./migrate.ts";
import { ReadCache } from "./read-cache.ts";
import { ping, pingRenewing, type Renewable } from "./readiness.ts";
import { PostgresShards } from "./shards.ts";
import { PostgresTokens } from "./tokens.ts";

/** The repositories over one database whose schema is up to date. Outages become StoreUnavailableError. */
export function createPostgresRepositories(
  sql: Sql,
  renewable?: Renewable,
  cache: ReadCache | null = null,
  sole = false,
): Repositories {
  const deliveries = new PostgresDeliveries(sql);
  // The proof of life's own connection (ADR 25): never idle-closed, never recycled (a new session has no lock).
  // It never asks for the server's array types (its statements use none): a connection ended while asking
  // rejects with nobody listening, an unhandled rejection that ends the process (connection.ts, typesKnown;
  // seen when backends were terminated under load).
  const lockOptions = { max: 1, idle_timeout: 0, max_lifetime: 0, fetch_types: false };
  const lockClient = renewable
    ? () => openPostgres(renewable.url, { ...renewable.options, ...lockOptions })
    : null;
  // The proof of life's checks carry the cache's heartbeats: entries kept while the channel proves alive.
  const shards = new PostgresShards(sql, sole, lockClient, cache);
  // No repository call waits on a database that answers nothing (stall-watch.ts): a publish in an outage
  // is answered 503 within about STALL_MS + PROBE_DEADLINE_MS, and so is each call of a stop.
  // Connections lost in an outage are renewed once the database answers again: postgres.js 3.4.9 can
  // leave a connection that closed with a write pending unable to send anything again (its startup
  // message never leaves, every attempt ends in CONNECT_TIMEOUT after 3 s; ADR 10). Statements running
  // on the old connections get a second to finish; what still waits then (a statement on a connection
  // silenced in the outage, which nothing else ends) fails as unavailable.
  let lost = false;
  const watch = stallWatch({
    probe: (deadlineMs) => ping(sql, deadlineMs),
    // The calls about to be answered 503 may have statements queued in postgres.js, on a connection that
    // keeps reconnecting: they would run once the database is back, after their caller was told "not
    // done" (a publish then stored after its 503). A new client, with the old one's connections destroyed
    // now, leaves them nothing to run on; and each call goes to a fresh connection when it answers again.
    onUnanswered: () => {
      lost = false;
      renewable?.renew();
    },
    onOutcome: (e) => {
      if (e !== null) {
        if (isConnectionLost(e)) lost = true;
      } else if (lost) {
        lost = false;
        renewable?.renew(1);
      }
    },
  });
  const pinged = renewable ? () => pingRenewing(sql, renewable) : () => ping(sql).then(() => false);
  const guard = <T extends object>(target: T) => guarded(target, watch);
  const due = cache ? new PostgresDueSignals(sql, cache) : null;
  return {
    endpoints: guard(new PostgresEndpoints(sql, cache)),
    // A publish carries the proof of life when one is wanted: fewer checks of their own (ADR 25).
    events: guard(new PostgresEvents(sql, undefined, due, shards.proofCarrier)),
    deliveries: guard(deliveries),
    shards: guard(shards),
    tokens: guard(new PostgresTokens(sql, cache)),
    idempotency: guard(new PostgresIdempotency(sql)),
    erasures: guard(new PostgresErasures(sql)),
    settings: guard(new PostgresSettings(sql)),
    // Like the cache, for a long-running server: due work stored here is announced to its shards' owners.
    ...(due ? { due } : {}),
    // The ping (every 5 s, and /readyz) also checks that the cache's notifications still arrive.
    ping: async () => {
      try {
        // A pool the ping renewed has nothing left to renew.
        if (await pinged()) lost = false;
      } catch (e) {
        if (isConnectionLost(e)) lost = true;
        throw e;
      }
      watch.noteSuccess();
      await cache?.check();
    },
    async close() {
      cache?.close();
      await shards.closeLocks();
      await sql.end({ timeout: 5 });
    },
  };
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
    // Only a server across a network has connections that go silent; the embedded database's one session
    // serves its connections in turns, where a slow ping is a busy backend, not a dead pool.
    const renewable = { url, options, renew, early: herald.cache === true };
    return { sql, cache, repositories: createPostgresRepositories(sql, renewable, cache, herald.sole) };
  } catch (e) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw translate(e);
  }
}
