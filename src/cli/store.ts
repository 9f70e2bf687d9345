import { runningEmbeddedUri, startEmbeddedMongo } from "../adapters/mongo/embedded.ts";
import { connectMongo } from "../adapters/mongo/index.ts";
import {
  legacyMongoDataNotice,
  runningEmbeddedPostgresUrl,
  startEmbeddedPostgres,
} from "../adapters/postgres/embedded.ts";
import { connectPostgres } from "../adapters/postgres/index.ts";
import { ConfigError, parseConfig } from "../app/config.ts";
import type { Repositories } from "../app/ports/store.ts";
import { CliError } from "./io.ts";

interface CliStore {
  repos: Repositories;
  close(): Promise<void>;
}

/**
 * The database the server uses, chosen by the same settings: DATABASE_URL (PostgreSQL), MONGODB_URI
 * (MongoDB), or else the embedded database in HERALD_DATA_DIR: the one a running Herald serves, or the
 * same files opened here when none runs.
 */
export async function openStore(env: Record<string, string | undefined>): Promise<CliStore> {
  let config: ReturnType<typeof parseConfig>;
  try {
    config = parseConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) throw new CliError(e.message);
    throw e;
  }
  if (config.store === "memory")
    throw new CliError("HERALD_STORE=memory keeps tokens in the server's memory: no command can reach them");
  if (config.store === "mongo") return openMongo(config.mongodbUri, config.mongodbDb, config.dataDir);
  if (config.databaseUrl) return connected(await connectPostgres(config.databaseUrl, { max: 2 }));
  const running = await runningEmbeddedPostgresUrl(config.dataDir);
  if (running) {
    try {
      const connection = await connectPostgres(running, { max: 1 });
      await connection.repositories.ping();
      return connected(connection);
    } catch {
      // The server stopped since it wrote its state file: open the files ourselves.
    }
  }
  const legacy = await legacyMongoDataNotice(config.dataDir);
  if (legacy) throw new CliError(legacy);
  const embedded = await startEmbeddedPostgres(config.dataDir);
  try {
    const { repositories } = await connectPostgres(embedded.url, { ...embedded.options, max: 1 });
    return {
      repos: repositories,
      async close() {
        await repositories.close();
        await embedded.stop();
      },
    };
  } catch (e) {
    await embedded.stop().catch(() => {});
    throw e;
  }
}

function connected({ repositories }: { repositories: Repositories }): CliStore {
  return { repos: repositories, close: () => repositories.close() };
}

/** MONGODB_URI; without it, the embedded mongod that a running Herald started, or one started here. */
async function openMongo(given: string | null, dbName: string, dataDir: string): Promise<CliStore> {
  const running = given ? null : await runningEmbeddedUri(dataDir);
  if (given || running) {
    const uri = (given || running) as string;
    try {
      const { repositories } = await connectMongo(uri, dbName);
      await repositories.ping();
      return connected({ repositories });
    } catch (e) {
      if (given) throw e;
      // A stale embedded.json from a server that is gone: start the embedded database ourselves.
    }
  }
  const embedded = await startEmbeddedMongo(dataDir);
  const { repositories } = await connectMongo(embedded.uri, dbName);
  return {
    repos: repositories,
    async close() {
      await repositories.close();
      await embedded.stop();
    },
  };
}
