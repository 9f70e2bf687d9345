import type { Sql } from "postgres";
import { connectMongo, type MongoConnection } from "../../src/adapters/mongo/index.ts";
import { connectPostgres, type PostgresConnection } from "../../src/adapters/postgres/index.ts";
import type { Repositories } from "../../src/app/ports/store.ts";
import { runMongoUri, uniqueDbName } from "./mongo.ts";
import { freshPostgresDatabase } from "./postgres.ts";

export type TestStoreKind = "postgres" | "mongo";

/** A database of its own for whole-system tests, on the run's PostgreSQL (default) or MongoDB. */
export interface FreshStore {
  kind: TestStoreKind;
  /**
   * What a Herald process or the CLI needs in its environment to use this database: DATABASE_URL, or
   * MONGODB_URI and MONGODB_DB. Never both (Herald refuses to start with both set).
   */
  env: Record<string, string>;
  /** Repositories over the database, on a connection of the test's own (closed by `cleanup()`). */
  connect(): Promise<Repositories>;
  /** PostgreSQL only: a SQL client on the database (closed by `cleanup()`), for what no port answers. */
  sql(): Promise<Sql>;
  /** Closes the test's connections and drops the database. */
  cleanup(): Promise<void>;
}

export async function freshStore(prefix: string, kind: TestStoreKind = "postgres"): Promise<FreshStore> {
  return kind === "postgres" ? freshPostgresStore(prefix) : freshMongoStore(prefix);
}

async function freshPostgresStore(prefix: string): Promise<FreshStore> {
  const db = await freshPostgresDatabase(prefix);
  let connection: Promise<PostgresConnection> | null = null;
  // One connection for the test, made on first use: the schema comes with it (connectPostgres migrates).
  const connected = () => {
    connection ??= connectPostgres(db.url, db.options);
    return connection;
  };
  return {
    kind: "postgres",
    env: { DATABASE_URL: db.url },
    connect: async () => (await connected()).repositories,
    sql: async () => (await connected()).sql,
    async cleanup() {
      try {
        if (connection) await (await connection).repositories.close();
      } catch {
        // the test closed it, or it never opened: the drop below ends what is left
      } finally {
        await db.cleanup();
      }
    },
  };
}

async function freshMongoStore(prefix: string): Promise<FreshStore> {
  const uri = runMongoUri();
  const name = uniqueDbName(prefix);
  let connection: Promise<MongoConnection> | null = null;
  const connected = () => {
    connection ??= connectMongo(uri, name);
    return connection;
  };
  return {
    kind: "mongo",
    env: { MONGODB_URI: uri, MONGODB_DB: name },
    connect: async () => (await connected()).repositories,
    sql: () => Promise.reject(new Error("a MongoDB store has no SQL")),
    async cleanup() {
      const c = await (connection ?? connectMongo(uri, name));
      try {
        await c.db.dropDatabase();
      } finally {
        await c.client.close();
      }
    },
  };
}
