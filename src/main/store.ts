import { createMemoryInsights, MemoryConsoleSessions } from "../adapters/memory/console.ts";
import { createMemoryRepositories } from "../adapters/memory/repositories.ts";
import type { EmbeddedMongo } from "../adapters/mongo/embedded.ts";
import type { StoreLiveness } from "../adapters/mongo/index.ts";
import type { startEmbeddedPostgres } from "../adapters/postgres/embedded.ts";
import type { Config } from "../app/config.ts";
import type { Logger } from "../app/logger.ts";
import type { ConsoleSessionRepository, DeliveryInsights } from "../app/ports/console.ts";
import type { Repositories } from "../app/ports/store.ts";

/** Told of every database round trip: its command, the table or collection, and the records it writes. */
export type CommandListener = (command: string, collection: string, written: number) => void;

/** The store one Herald process runs on, opened and ready. */
export interface OpenedStore {
  repos: Repositories;
  console: { sessions: ConsoleSessionRepository; insights: DeliveryInsights };
  /** Mongo only: whether this process's own client is wedged (docs/adr/0010-database-outages.md). */
  liveness: StoreLiveness | null;
  /** A database started by this process (embedded, or memory): nobody else can have made a token for it. */
  startedHere: boolean;
  /** Closes the repositories, then stops a database this process started. */
  close(): Promise<void>;
}

/** A data directory that holds an earlier version's embedded MongoDB: Herald will not start beside it. */
export class LegacyDataDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LegacyDataDirError";
  }
}

/**
 * Opens the configured store: PostgreSQL at DATABASE_URL, or the embedded PostgreSQL in HERALD_DATA_DIR
 * when no database is configured; MongoDB at MONGODB_URI (or an embedded mongod, HERALD_STORE=mongo);
 * or process memory.
 */
export async function openStore(
  config: Config,
  logger: Logger,
  onCommand: CommandListener,
): Promise<OpenedStore> {
  if (config.store === "memory") {
    const memory = createMemoryRepositories();
    return {
      repos: memory,
      console: {
        sessions: new MemoryConsoleSessions(),
        insights: createMemoryInsights(() => memory.deliveries.rows.values()),
      },
      liveness: null,
      startedHere: true,
      close: () => memory.close(),
    };
  }
  if (config.store === "mongo") return openMongo(config, logger, onCommand);
  return openPostgres(config, logger, onCommand);
}

async function openPostgres(
  config: Config,
  logger: Logger,
  onCommand: CommandListener,
): Promise<OpenedStore> {
  let url = config.databaseUrl;
  let embedded: Awaited<ReturnType<typeof startEmbeddedPostgres>> | null = null;
  let options = {};
  if (!url) {
    // Loaded only here, like the Mongo adapter below: a start on a server or in memory skips their modules.
    const { legacyMongoDataNotice, startEmbeddedPostgres } = await import("../adapters/postgres/embedded.ts");
    const legacy = await legacyMongoDataNotice(config.dataDir);
    if (legacy) throw new LegacyDataDirError(legacy);
    // Said before the wait: a first start sets up the database's files and can take seconds.
    logger.info("starting the embedded PostgreSQL", { data_dir: config.dataDir });
    embedded = await startEmbeddedPostgres(config.dataDir);
    url = embedded.url;
    options = embedded.options;
    logger.info("embedded PostgreSQL started", { data_dir: config.dataDir });
  }
  // Loaded only here: a start in memory or on MongoDB skips the PostgreSQL adapter and its client.
  const [{ connectPostgres }, { createPostgresConsoleStore }] = await Promise.all([
    import("../adapters/postgres/index.ts"),
    import("../adapters/postgres/console.ts"),
  ]);
  try {
    const { sql, repositories } = await connectPostgres(
      url,
      {
        ...options,
        // Every statement is one round trip; the metrics count them by their first keyword.
        debug: (_connection, query) => onCommand(firstKeyword(query), "", 0),
      },
      // Tokens and fan-outs cached between publishes, kept right by LISTEN/NOTIFY (ADR 18); the embedded
      // database's one session carries no notifications, and the CLI writes beside it.
      // Its pid lock proves it the only process: a predecessor's shards are taken at once (ADR 25).
      { cache: embedded === null, sole: embedded !== null },
    );
    // The ping renews a pool whose connections went silent while the database answers new ones (ADR 18):
    // run it on a timer too, so the engine recovers even when nobody asks /readyz.
    const heal = setInterval(() => void repositories.ping().catch(() => {}), POOL_CHECK_MS);
    (heal as { unref?: () => void }).unref?.();
    return {
      repos: repositories,
      console: createPostgresConsoleStore(sql),
      liveness: null,
      startedHere: embedded !== null,
      async close() {
        clearInterval(heal);
        await repositories.close();
        await embedded?.stop();
      },
    };
  } catch (e) {
    await embedded?.stop().catch(() => {});
    throw e;
  }
}

async function openMongo(config: Config, logger: Logger, onCommand: CommandListener): Promise<OpenedStore> {
  const { startEmbeddedMongo } = await import("../adapters/mongo/embedded.ts");
  const { connectMongo, freshPing, storeLiveness } = await import("../adapters/mongo/index.ts");
  const { createMongoConsoleStore } = await import("../adapters/mongo/console.ts");
  let uri = config.mongodbUri;
  let embedded: EmbeddedMongo | null = null;
  if (!uri) {
    embedded = await startEmbeddedMongo(config.dataDir);
    uri = embedded.uri;
    logger.info("embedded MongoDB started", { data_dir: config.dataDir });
  }
  const connection = await connectMongo(uri, config.mongodbDb, { monitorCommands: true });
  if (connection.writeGuard !== "guarded")
    logger.warn(
      "the MongoDB driver's write guard could not be installed (driver changed?); after a database restart this process may need /healthz to restart it",
      { guard: connection.writeGuard },
    );
  connection.client.on("commandStarted", (e) =>
    onCommand(e.commandName, collectionOf(e.command), documentsWritten(e.command)),
  );
  const repos = connection.repositories;
  // Liveness: fails only when this process's client is wedged while the database answers others.
  const liveness = storeLiveness({
    pingOwn: () => repos.ping(),
    pingFresh: freshPing(uri, 3_000),
    ...LIVENESS,
    now: () => Date.now(),
    onChange: (wedged) =>
      wedged
        ? logger.error("database client wedged; /healthz fails so a supervisor restarts the process", {
            reason: wedged,
          })
        : logger.info("database client works again"),
  });
  connection.client.on("commandSucceeded", () => liveness.noteSuccess());
  return {
    repos,
    console: await createMongoConsoleStore(connection.db),
    liveness,
    startedHere: embedded !== null,
    async close() {
      liveness.stop();
      await repos.close();
      await embedded?.stop();
    },
  };
}

/**
 * The liveness check's cadence (docs/adr/0010-database-outages.md): probes after 5 s without a successful command; wedged after
 * 60 s of the process's own commands failing while fresh connections succeed: twice the 30 s socket
 * timeout, the longest a stuck operation can hold a connection, so the driver's own recovery comes first.
 */
const LIVENESS = { everyMs: 5_000, wedgedAfterMs: 60_000, probeTimeoutMs: 5_000 };

/** How often the PostgreSQL pool is checked for connections that went silent. */
const POOL_CHECK_MS = 5_000;

/** The statement's kind: its first word, upper-cased (SELECT, INSERT, WITH, ...). */
function firstKeyword(query: string): string {
  return /^\s*([A-Za-z]+)/.exec(query)?.[1]?.toUpperCase() ?? "";
}

/** The collection a command names (its first field's value), or "" for commands on none. */
function collectionOf(command: Record<string, unknown>): string {
  for (const key in command) {
    const v = command[key];
    return typeof v === "string" ? v : "";
  }
  return "";
}

/** Documents a command writes (at most): inserts, updates and deletes it carries; 0 for reads. */
function documentsWritten(command: Record<string, unknown>): number {
  for (const key of ["documents", "updates", "deletes"] as const) {
    const list = command[key];
    if (Array.isArray(list)) return list.length;
  }
  return "findAndModify" in command ? 1 : 0;
}
