import { runningEmbeddedUri, startEmbeddedMongo } from "../adapters/mongo/embedded.ts";
import { connectMongo } from "../adapters/mongo/index.ts";
import type { Repositories } from "../app/ports/store.ts";

/**
 * The database the server uses: MONGODB_URI when set; otherwise the embedded one that a running Herald
 * started in HERALD_DATA_DIR; otherwise the embedded database started here on the same files.
 */
export async function openStore(env: Record<string, string | undefined>): Promise<{
  repos: Repositories;
  close(): Promise<void>;
}> {
  const dbName = env.MONGODB_DB || "herald";
  const dataDir = env.HERALD_DATA_DIR || "./.herald";
  const given = env.MONGODB_URI;
  const running = given ? null : await runningEmbeddedUri(dataDir);
  if (given || running) {
    const uri = (given || running) as string;
    try {
      const { repositories } = await connectMongo(uri, dbName);
      await repositories.ping();
      return { repos: repositories, close: () => repositories.close() };
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
