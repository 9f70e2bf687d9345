import { createAesGcmCipher } from "../adapters/crypto/aes-gcm-cipher.ts";
import { loadMasterKey } from "../adapters/crypto/master-key.ts";
import { createSubjectKeys } from "../adapters/crypto/subject-keys.ts";
import { createHttpApp } from "../adapters/http/app.ts";
import { createMemoryInsights, MemoryConsoleSessions } from "../adapters/memory/console.ts";
import { createMemoryRepositories } from "../adapters/memory/repositories.ts";
import { createPrometheusMetrics } from "../adapters/metrics/prometheus.ts";
import { createMongoConsoleStore } from "../adapters/mongo/console.ts";
import { type EmbeddedMongo, startEmbeddedMongo } from "../adapters/mongo/embedded.ts";
import { connectMongo, freshPing, type StoreLiveness, storeLiveness } from "../adapters/mongo/index.ts";
import { startScheduler } from "../adapters/scheduler/croner-scheduler.ts";
import { systemClock, systemIds } from "../adapters/system.ts";
import type { Config } from "../app/config.ts";
import { consoleUseCases } from "../app/console.ts";
import { consoleInsights } from "../app/console-insights.ts";
import { deliveryUseCases } from "../app/deliveries.ts";
import type { AppDeps } from "../app/deps.ts";
import { endpointTools } from "../app/endpoint-tools.ts";
import { endpointUseCases } from "../app/endpoints.ts";
import { createEngine, type Dispatcher } from "../app/engine/engine.ts";
import { erasureUseCases } from "../app/erasures.ts";
import { eventUseCases } from "../app/events.ts";
import type { Logger } from "../app/logger.ts";
import { maintenanceJobs } from "../app/maintenance.ts";
import type { ConsoleSessionRepository, DeliveryInsights } from "../app/ports/console.ts";
import type { Sender } from "../app/ports/sending.ts";
import type { Repositories } from "../app/ports/store.ts";
import { settingsUseCases } from "../app/settings.ts";
import { tokenUseCases } from "../app/tokens.ts";
import { heldCount } from "../domain/endpoint.ts";
import { VERSION } from "../version.ts";

export interface HeraldOptions {
  config: Config;
  logger: Logger;
  /** Builds the runtime's HTTP sender. */
  makeSender(config: Config): Sender;
  /** Use the in-memory store instead of MongoDB (benchmark, tests). */
  store?: "mongo" | "memory";
  /** Print a first token when the store starts empty here (default true; the benchmark makes its own). */
  printFirstToken?: boolean;
}

export interface Herald {
  fetch: (request: Request) => Response | Promise<Response>;
  dispatcher: Dispatcher;
  repos: Repositories;
  /** Stops claiming, finishes or releases in-flight work within `graceMs`, closes the database. */
  stop(graceMs?: number): Promise<void>;
}

/** Everything one Herald process runs: the store, the API, the dispatcher and its schedule. */
export async function createHerald(options: HeraldOptions): Promise<Herald> {
  const { config, logger } = options;
  let embedded: EmbeddedMongo | null = null;
  // Set once the metrics exist; counts every MongoDB command (round trip) for /metrics.
  let onDbCommand = (_command: string, _collection: string, _written: number) => {};
  let repos: Repositories;
  let liveness: StoreLiveness | null = null;
  let consoleStore: { sessions: ConsoleSessionRepository; insights: DeliveryInsights };
  if (options.store === "memory") {
    const memory = createMemoryRepositories();
    repos = memory;
    consoleStore = {
      sessions: new MemoryConsoleSessions(),
      insights: createMemoryInsights(() => memory.deliveries.rows.values()),
    };
  } else {
    let uri = config.mongodbUri;
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
      onDbCommand(e.commandName, collectionOf(e.command), documentsWritten(e.command)),
    );
    repos = connection.repositories;
    const r = repos;
    // Liveness: fails only when this process's client is wedged while the database answers others.
    liveness = storeLiveness({
      pingOwn: () => r.ping(),
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
    const l = liveness;
    connection.client.on("commandSucceeded", () => l.noteSuccess());
    consoleStore = await createMongoConsoleStore(connection.db);
  }

  const masterKey = await loadMasterKey(config.masterKey, config.dataDir);
  const cipher = await createAesGcmCipher(masterKey);
  let dispatcher: Dispatcher | null = null;
  const deps: AppDeps = {
    repos,
    clock: systemClock,
    ids: systemIds,
    cipher,
    subjects: await createSubjectKeys(masterKey),
    signal: { notify: (accepted) => dispatcher?.wake(accepted) },
    policy: { allowHttpUrls: config.allowHttpUrls, allowPrivateNetworks: config.allowPrivateNetworks },
  };
  const prometheus = createPrometheusMetrics(async () => {
    const now = systemClock.now();
    const [s, fifo] = await Promise.all([repos.deliveries.dueStats(now), repos.endpoints.listFifo()]);
    const pending = fifo.length ? await repos.deliveries.countPending(fifo) : new Map<string, number>();
    return {
      dueBacklog: s.count,
      oldestDueAgeSeconds: s.oldestScheduledAt ? (now.getTime() - s.oldestScheduledAt.getTime()) / 1000 : 0,
      fifoHeld: [...pending.values()].reduce((sum, n) => sum + heldCount("fifo", n), 0),
    };
  });
  const { metrics, render } = prometheus;
  const events = eventUseCases(deps, prometheus.fanOut);
  onDbCommand = prometheus.dbCommand;
  const tokens = tokenUseCases({ tokens: repos.tokens, clock: systemClock, ids: systemIds });
  const endpoints = endpointUseCases(deps);
  const erasures = erasureUseCases(deps);
  const settings = settingsUseCases({
    settings: repos.settings,
    clock: systemClock,
    maxRetentionMs: config.retentionMs,
  });
  const consoleUse = consoleUseCases({
    sessions: consoleStore.sessions,
    tokens,
    endpoints,
    clock: systemClock,
    ids: systemIds,
  });
  // Expired console sessions, sign-in codes and portal links are forgotten a day after they expire.
  const purgeConsole = setInterval(() => void consoleUse.purgeExpired().catch(() => {}), 3_600_000);
  (purgeConsole as { unref?: () => void }).unref?.();
  const app = createHttpApp({
    endpoints,
    events,
    deliveries: deliveryUseCases(deps),
    tools: endpointTools(deps, events),
    tokens,
    erasures,
    settings,
    ping: () => repos.ping(),
    wedged: () => liveness?.wedged() ?? null,
    metrics: render,
    logger,
    rateLimit: config.rateLimit ? { limit: config.rateLimit, clock: systemClock } : null,
    version: VERSION,
    console: {
      use: consoleUse,
      insights: consoleInsights({ ...deps, insights: consoleStore.insights, version: VERSION }),
      portalFrameAncestors: config.portalFrameAncestors,
    },
  });

  const sender = options.makeSender(config);
  dispatcher = createEngine({
    repos,
    clock: systemClock,
    ids: systemIds,
    cipher,
    sender,
    logger: logger.child({ component: "dispatcher" }),
    metrics,
    // Unique per start: a restarted process is a new member, and its old leases simply expire.
    owner: `${hostName()}:${systemIds.uuid()}`,
    options: {
      concurrency: config.concurrency,
      endpointConcurrency: config.endpointConcurrency,
      retryScheduleMs: config.retryScheduleMs,
      deliveryTimeoutMs: config.deliveryTimeoutMs,
      leaseMarginMs: config.leaseMarginMs,
    },
  });
  const jobs = maintenanceJobs({
    repos,
    clock: systemClock,
    events,
    metrics,
    logger: logger.child({ component: "maintenance" }),
    disableAfterMs: config.disableAfterMs,
    retentionMs: config.retentionMs,
  });
  dispatcher.start();
  const scheduler = startScheduler(dispatcher, jobs, logger);
  // A start after a crash finishes what the crash interrupted at once, not on the next tick.
  void jobs.finishFanouts().catch(() => {});
  // Events stored before Herald kept their subject fields get them now; an erasure waits for this.
  void erasures
    .backfill()
    .then((n) => n > 0 && logger.info("subject fields of earlier events filled in", { events: n }))
    .catch((e: unknown) =>
      logger.warn("filling in subject fields failed; the next erasure tries again", { error: e as Error }),
    );

  // A store started here (embedded MongoDB, or memory) has no other way to get a first token.
  if (
    (embedded || options.store === "memory") &&
    options.printFirstToken !== false &&
    (await tokens.count()) === 0
  ) {
    const first = await tokens.create({ name: "first token" });
    // Printed once, on the first start of an empty database, so a newcomer can call the API at once.
    console.log(
      `\nHerald: first API token (shown once; keep it): ${first.token}\n  tenant_id=${first.record.tenantId} project_id=${first.record.projectId}\n`,
    );
  }

  const d = dispatcher;
  return {
    fetch: app.fetch,
    dispatcher: d,
    repos,
    async stop(graceMs = 10_000) {
      scheduler.stop();
      liveness?.stop();
      clearInterval(purgeConsole);
      await d.stop(graceMs);
      await sender.close();
      await repos.close();
      if (embedded) await embedded.stop();
    },
  };
}

/**
 * The liveness check's cadence (docs/adr/0010-database-outages.md): probes after 5 s without a successful command; wedged after
 * 60 s of the process's own commands failing while fresh connections succeed: twice the 30 s socket
 * timeout, the longest a stuck operation can hold a connection, so the driver's own recovery comes first.
 */
const LIVENESS = { everyMs: 5_000, wedgedAfterMs: 60_000, probeTimeoutMs: 5_000 };

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

function hostName(): string {
  return globalThis.process?.env?.HOSTNAME ?? "herald";
}
