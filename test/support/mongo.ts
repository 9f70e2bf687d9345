import { type Db, MongoClient } from "mongodb";
import { inject } from "vitest";
import { createMongoRepositories, DEFAULT_CLIENT_OPTIONS } from "../../src/adapters/mongo/index.ts";
import type { Repositories } from "../../src/app/ports/store.ts";

export interface FreshMongo {
  uri: string;
  client: MongoClient;
  db: Db;
  repos: Repositories;
  /** Drops the database and closes the client; safe after `repos.close()`. */
  cleanup(): Promise<void>;
}

/**
 * The run's MongoDB server (global-setup.ts). Where none could be had, throws the one line that says
 * what to provide: only the tests that need MongoDB fail then.
 */
export function runMongoUri(): string {
  const uri = inject("mongoUri");
  if (!uri) throw new Error(inject("mongoUnavailable"));
  return uri;
}

/** A database name unique to this call: `<prefix>_<random>`, within FerretDB's name rules. */
export function uniqueDbName(prefix: string): string {
  const random = globalThis.crypto.randomUUID().replaceAll("-", "").slice(0, 16);
  return `${prefix}_${random}`.slice(0, 63);
}

/** MongoDB repositories over a new, empty database on the run's server (see global-setup.ts). */
export async function freshMongoRepositories(prefix = "herald_test"): Promise<FreshMongo> {
  const uri = runMongoUri();
  const name = uniqueDbName(prefix);
  const client = new MongoClient(uri, DEFAULT_CLIENT_OPTIONS);
  await client.connect();
  const db = client.db(name);
  const repos = await createMongoRepositories(db, client);
  return {
    uri,
    client,
    db,
    repos,
    async cleanup() {
      try {
        await db.dropDatabase();
        await client.close();
      } catch {
        // The test closed the client itself: drop through a short-lived one.
        const other = new MongoClient(uri, DEFAULT_CLIENT_OPTIONS);
        try {
          await other.db(name).dropDatabase();
        } finally {
          await other.close();
        }
      }
    },
  };
}
