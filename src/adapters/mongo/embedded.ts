import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
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

/** How long the reachability check of the download server may take before we call the machine offline. */
const DOWNLOAD_PROBE_MS = 5_000;

/** Starts mongod through mongodb-memory-server with its files under the data directory, so data survives restarts. */
export async function startEmbeddedMongo(dataDir: string): Promise<EmbeddedMongo> {
  const dbPath = join(resolve(dataDir), "db");
  await mkdir(dbPath, { recursive: true });
  const { MongoMemoryServer, DryMongoBinary } = await import("mongodb-memory-server").catch(() => {
    // A development dependency: a production install (npm ci --omit=dev) does not have it.
    throw new Error(
      "The embedded MongoDB needs mongodb-memory-server, a development dependency (npm install without --omit=dev); set MONGODB_URI to a MongoDB 7+ (or FerretDB) server.",
    );
  });

  // No binary on this machine: a download is the only way, and offline it would retry with back-off
  // (or, behind a firewall that drops packets, wait a minute per attempt). Check first that the
  // download server can be reached at all, and give up within seconds when it cannot.
  const found = await DryMongoBinary.locateBinary(await DryMongoBinary.generateOptions());
  if (!found) {
    if (/^(false|0|no)$/i.test(process.env.MONGOMS_RUNTIME_DOWNLOAD ?? "")) throw new NoMongoBinaryError();
    if (!(await reachable(downloadTarget(process.env), DOWNLOAD_PROBE_MS))) throw new NoMongoBinaryError();
  }

  let server: InstanceType<typeof MongoMemoryServer>;
  try {
    // mongodb-memory-server prints a multi-line report with a stack trace on console.warn when the start
    // fails; Herald reports one line instead (see below).
    server = await withoutConsoleWarn(() =>
      MongoMemoryServer.create({
        instance: { dbPath, storageEngine: "wiredTiger", ip: "127.0.0.1" },
      }),
    );
  } catch (e) {
    const text = String((e as Error)?.message ?? e);
    if (/lock/i.test(text))
      throw new Error(`The embedded database in ${dbPath} is in use by another process.`);
    if (
      /download|binary|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|fetch|getaddrinfo|status code/i.test(text)
    ) {
      throw new NoMongoBinaryError();
    }
    throw new Error(firstLine(text));
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

/** Where a binary download would connect first: the proxy when one is configured, else the download host. */
export function downloadTarget(env: Record<string, string | undefined>): { host: string; port: number } {
  const useHttp = /^(true|1|yes)$/i.test(env.MONGOMS_USE_HTTP ?? "");
  const proxy = useHttp
    ? (env.HTTP_PROXY ?? env.http_proxy)
    : (env.HTTPS_PROXY ?? env.https_proxy ?? env.HTTP_PROXY ?? env.http_proxy);
  const source =
    proxy || env.MONGOMS_DOWNLOAD_URL || env.MONGOMS_DOWNLOAD_MIRROR || "https://fastdl.mongodb.org";
  try {
    const url = new URL(source.includes("://") ? source : `http://${source}`);
    const port = url.port ? Number(url.port) : url.protocol === "http:" || (useHttp && !proxy) ? 80 : 443;
    return { host: url.hostname.replace(/^\[|\]$/g, ""), port };
  } catch {
    return { host: "fastdl.mongodb.org", port: useHttp ? 80 : 443 };
  }
}

/** True when a TCP connection to host:port opens within `timeoutMs` (DNS included). */
export function reachable(target: { host: string; port: number }, timeoutMs: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host: target.host, port: target.port });
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on("error", () => {});
      socket.destroy();
      done(ok);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.once("connect", () => finish(true));
    socket.once("error", () => finish(false));
  });
}

async function withoutConsoleWarn<T>(fn: () => Promise<T>): Promise<T> {
  const original = console.warn;
  console.warn = () => {};
  try {
    return await fn();
  } finally {
    console.warn = original;
  }
}

function firstLine(text: string): string {
  return text.split("\n").find((l) => l.trim() !== "") ?? text;
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
