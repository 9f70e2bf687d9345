import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";

export interface EmbeddedMongo {
  uri: string;
  stop(): Promise<void>;
}

export class NoMongoBinaryError extends Error {
  constructor() {
    super(
      "No MongoDB binary could be found or downloaded for the embedded database; set MONGODB_URI to a MongoDB 7+ (or FerretDB) server.",
    );
    this.name = "NoMongoBinaryError";
  }
}

const stateFile = (dataDir: string) => join(resolve(dataDir), "embedded.json");

/** Starts mongod through mongodb-memory-server with its files under the data directory, so data survives restarts. */
export async function startEmbeddedMongo(dataDir: string): Promise<EmbeddedMongo> {
  const dbPath = join(resolve(dataDir), "db");
  await mkdir(dbPath, { recursive: true });
  const { MongoMemoryServer } = await import("mongodb-memory-server");
  let server: InstanceType<typeof MongoMemoryServer>;
  try {
    server = await MongoMemoryServer.create({
      instance: { dbPath, storageEngine: "wiredTiger", ip: "127.0.0.1" },
    });
  } catch (e) {
    const text = String((e as Error)?.message ?? e);
    if (/download|binary|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|fetch|getaddrinfo|status code|lock/i.test(text)) {
      if (/lock/i.test(text)) throw new Error(`The embedded database in ${dbPath} is in use by another process.`);
      throw new NoMongoBinaryError();
    }
    throw e;
  }
  const uri = server.getUri();
  await writeFile(stateFile(dataDir), JSON.stringify({ uri, pid: process.pid }));
  return {
    uri,
    async stop() {
      await rm(stateFile(dataDir), { force: true });
      await server.stop({ doCleanup: false, force: false });
    },
  };
}

/** The URI of an embedded database that a running Herald started in this data directory, if any. */
export async function runningEmbeddedUri(dataDir: string): Promise<string | null> {
  try {
    const { uri } = JSON.parse(await readFile(stateFile(dataDir), "utf8")) as { uri: string };
    return uri;
  } catch {
    return null;
  }
}
