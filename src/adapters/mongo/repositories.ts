import { type Db, MongoClient, type MongoClientOptions } from "mongodb";
import { type Repositories, StoreUnavailableError } from "../../app/ports/store.ts";
import { stallWatch } from "../stall-watch.ts";
import { collectionsOf } from "./collections.ts";
import { DEFAULT_CLIENT_OPTIONS } from "./connection.ts";
import { MongoDeliveries } from "./deliveries.ts";
import { guardDriverWrites, type WriteGuard } from "./driver-write-guard.ts";
import { MongoEndpoints } from "./endpoints.ts";
import { MongoErasures, MongoSettings } from "./erasures.ts";
import { guarded, translate } from "./errors.ts";
import { MongoEvents } from "./events.ts";
import { MongoIdempotency } from "./idempotency.ts";
import { ensureIndexes } from "./indexes.ts";
import { MongoShards } from "./shards.ts";
import { MongoTokens } from "./tokens.ts";

/** How long a readiness ping may take before the database counts as not answering. */
export const PING_DEADLINE_MS = 3000;

/** Rejects with StoreUnavailableError when `p` has not settled within `ms`. */
function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new StoreUnavailableError()), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** The repositories over one database; creates the indexes first. Driver outages become StoreUnavailableError. */
export async function createMongoRepositories(db: Db, client: MongoClient): Promise<Repositories> {
  try {
    await ensureIndexes(db);
  } catch (e) {
    throw translate(e);
  }
  const c = collectionsOf(db);
  const deliveries = new MongoDeliveries(c.deliveries);
  try {
    await deliveries.backfillShards();
  } catch (e) {
    throw translate(e);
  }
  // No call waits on a database that answers nothing (stall-watch.ts): a publish in an outage, or a stop's
  // last writes, are answered 503 within about STALL_MS + PROBE_DEADLINE_MS, not after the wait queue's 10 s.
  const watch = stallWatch({
    probe: async (deadlineMs) => {
      await withDeadline(db.command({ ping: 1 }), deadlineMs);
    },
  });
  const guard = <T extends object>(target: T) => guarded(target, watch);
  return {
    endpoints: guard(new MongoEndpoints(c.endpoints)),
    events: guard(new MongoEvents(c.events)),
    deliveries: guard(deliveries),
    shards: guard(new MongoShards(c.shardLeases, c.processes)),
    tokens: guard(new MongoTokens(c.tokens)),
    idempotency: guard(new MongoIdempotency(c.idempotency)),
    erasures: guard(new MongoErasures(c.erasures)),
    settings: guard(new MongoSettings(c.projectSettings)),
    async ping() {
      try {
        await withDeadline(db.command({ ping: 1 }), PING_DEADLINE_MS);
      } catch (e) {
        throw translate(e);
      }
      watch.noteSuccess();
    },
    async close() {
      await client.close();
    },
  };
}

export interface MongoConnection {
  client: MongoClient;
  db: Db;
  repositories: Repositories;
  /** Whether the driver's write hang is guarded against ("unavailable": a driver upgrade moved it; log it). */
  writeGuard: WriteGuard;
}

/** Connects, creates the indexes and builds the repositories; rejects with StoreUnavailableError when unreachable. */
export async function connectMongo(
  uri: string,
  dbName: string,
  options: MongoClientOptions = {},
): Promise<MongoConnection> {
  // Before the first connection: without it, a database restart can leave this client unusable for good.
  const writeGuard = guardDriverWrites();
  const client = new MongoClient(uri, { ...DEFAULT_CLIENT_OPTIONS, ...options });
  try {
    await client.connect();
    const db = client.db(dbName);
    return { client, db, repositories: await createMongoRepositories(db, client), writeGuard };
  } catch (e) {
    await client.close().catch(() => {});
    throw translate(e);
  }
}
