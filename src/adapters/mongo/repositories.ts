import { type Db, MongoClient, type MongoClientOptions } from "mongodb";
import type { Repositories } from "../../app/ports/store.ts";
import { collectionsOf } from "./collections.ts";
import { MongoDeliveries } from "./deliveries.ts";
import { MongoEndpoints } from "./endpoints.ts";
import { guarded, translate } from "./errors.ts";
import { MongoEvents } from "./events.ts";
import { MongoIdempotency } from "./idempotency.ts";
import { ensureIndexes } from "./indexes.ts";
import { MongoShards } from "./shards.ts";
import { MongoTokens } from "./tokens.ts";

/** Fail fast when the database is gone, so callers can answer 503 instead of hanging. */
export const DEFAULT_CLIENT_OPTIONS: MongoClientOptions = {
  serverSelectionTimeoutMS: 3000,
  connectTimeoutMS: 3000,
};

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
  return {
    endpoints: guarded(new MongoEndpoints(c.endpoints)),
    events: guarded(new MongoEvents(c.events)),
    deliveries: guarded(deliveries),
    shards: guarded(new MongoShards(c.shardLeases, c.processes)),
    tokens: guarded(new MongoTokens(c.tokens)),
    idempotency: guarded(new MongoIdempotency(c.idempotency)),
    async ping() {
      try {
        await db.command({ ping: 1 });
      } catch (e) {
        throw translate(e);
      }
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
}

/** Connects, creates the indexes and builds the repositories; rejects with StoreUnavailableError when unreachable. */
export async function connectMongo(
  uri: string,
  dbName: string,
  options: MongoClientOptions = {},
): Promise<MongoConnection> {
  const client = new MongoClient(uri, { ...DEFAULT_CLIENT_OPTIONS, ...options });
  try {
    await client.connect();
    const db = client.db(dbName);
    return { client, db, repositories: await createMongoRepositories(db, client) };
  } catch (e) {
    await client.close().catch(() => {});
    throw translate(e);
  }
}
