import { createAesGcmCipher } from "../adapters/crypto/aes-gcm-cipher.ts";
import { createCertificateReader } from "../adapters/crypto/client-certificates.ts";
import { loadMasterKey } from "../adapters/crypto/master-key.ts";
import { createSubjectKeys } from "../adapters/crypto/subject-keys.ts";
import { createHttpApp } from "../adapters/http/app.ts";
import { withListenSessions } from "../adapters/listen/sender.ts";
import { createListenSessions } from "../adapters/listen/sessions.ts";
import { createPrometheusMetrics } from "../adapters/metrics/prometheus.ts";
import { startScheduler } from "../adapters/scheduler/croner-scheduler.ts";
import { systemClock, systemIds } from "../adapters/system.ts";
import { loadTelemetry, type Telemetry } from "../adapters/telemetry/load.ts";
import type { Config, StoreKind } from "../app/config.ts";
import { consoleUseCases } from "../app/console.ts";
import { consoleInsights } from "../app/console-insights.ts";
import { deliveryUseCases } from "../app/deliveries.ts";
import type { AppDeps } from "../app/deps.ts";
import { type BrokerKind, brokerSenders } from "../app/destinations.ts";
import { endpointTools } from "../app/endpoint-tools.ts";
import { endpointUseCases } from "../app/endpoints.ts";
import { createEngine, type Dispatcher } from "../app/engine/engine.ts";
import { erasureUseCases } from "../app/erasures.ts";
import { eventUseCases } from "../app/events.ts";
import type { Logger } from "../app/logger.ts";
import { maintenanceJobs } from "../app/maintenance.ts";
import { operationalEvents } from "../app/operational.ts";
import type { BrokerSender, Sender } from "../app/ports/sending.ts";
import type { Repositories } from "../app/ports/store.ts";
import { settingsUseCases } from "../app/settings.ts";
import { tokenUseCases } from "../app/tokens.ts";
import { heldCount } from "../domain/endpoint.ts";
import { VERSION } from "../version.ts";
import { makeBrokerSenders } from "./brokers.ts";
import { type CommandListener, openStore } from "./store.ts";

export interface HeraldOptions {
  config: Config;
  logger: Logger;
  /** Builds the runtime's HTTP sender. */
  makeSender(config: Config): Sender;
  /** Builds the broker senders (ADR 27); default: makeBrokerSenders (src/main/brokers.ts). */
  makeBrokerSenders?(config: Config, logger: Logger): Partial<Record<BrokerKind, BrokerSender>>;
  /** Overrides the configured store (benchmark, tests). */
  store?: StoreKind;
  /** Print a first token when the store starts empty here (default true; the benchmark makes its own). */
  printFirstToken?: boolean;
}

export interface Herald {
  fetch: (request: Request) => Response | Promise<Response>;
  dispatcher: Dispatcher;
  repos: Repositories;
  /** OpenTelemetry export (ADR 24); null when no OTEL_* variable asks for it. */
  telemetry: Telemetry | null;
  /** Stops claiming, finishes or releases in-flight work within `graceMs`, closes the database. */
  stop(graceMs?: number): Promise<void>;
  /**
   * Gives up this process's shards, heartbeat and proof of life at once, without waiting for sends in
   * flight, so other processes take its endpoints now (ADR 25). For an exit "at once" (a second Ctrl-C):
   * call it (bounded by a short timeout), then exit. Closes nothing else.
   */
  giveUp(): Promise<void>;
  /** Ends every `herald listen` stream (ADR 29): before the server closes, which waits for open responses. */
  endStreams(): void;
}

/** Everything one Herald process runs: the store, the API, the dispatcher and its schedule. */
export async function createHerald(options: HeraldOptions): Promise<Herald> {
  const { config, logger } = options;
  // Set once the metrics exist; counts every database round trip for /metrics.
  let onDbCommand: CommandListener = () => {};
  const store = await openStore(
    { ...config, store: options.store ?? config.store },
    logger,
    (command, collection, written) => onDbCommand(command, collection, written),
  );
  const { repos, liveness } = store;
  const consoleStore = store.console;

  // The memory store's secrets live and die with the process: a key of its own, never written to disk.
  const masterKey =
    (options.store ?? config.store) === "memory" && !config.masterKey
      ? crypto.getRandomValues(new Uint8Array(32))
      : await loadMasterKey(config.masterKey, config.dataDir);
  const cipher = await createAesGcmCipher(masterKey);
  // Off by default: then the SDK is never imported and `tracing` stays null (ADR 24).
  const telemetry = await loadTelemetry(config.telemetry, logger.child({ component: "telemetry" }), VERSION);
  let dispatcher: Dispatcher | null = null;
  const deps: AppDeps = {
    repos,
    clock: systemClock,
    ids: systemIds,
    cipher,
    subjects: await createSubjectKeys(masterKey),
    certificates: createCertificateReader(),
    signal: { notify: (accepted) => dispatcher?.wake(accepted) },
    tracing: telemetry?.tracing ?? null,
    policy: { allowHttpUrls: config.allowHttpUrls, allowPrivateNetworks: config.allowPrivateNetworks },
  };
  const gauges = async () => {
    const now = systemClock.now();
    const [s, fifo] = await Promise.all([repos.deliveries.dueStats(now), repos.endpoints.listFifo()]);
    const pending = fifo.length ? await repos.deliveries.countPending(fifo) : new Map<string, number>();
    return {
      dueBacklog: s.count,
      oldestDueAgeSeconds: s.oldestScheduledAt ? (now.getTime() - s.oldestScheduledAt.getTime()) / 1000 : 0,
      fifoHeld: [...pending.values()].reduce((sum, n) => sum + heldCount("fifo", n), 0),
    };
  };
  const prometheus = createPrometheusMetrics(gauges, () => dispatcher?.recording() ?? null);
  const { render } = prometheus;
  // With OTLP metrics on, each report goes to /metrics and to the OTLP instruments alike.
  const { metrics, fanOut } = telemetry?.metered(prometheus, gauges) ?? prometheus;
  const events = eventUseCases(deps, fanOut);
  onDbCommand = prometheus.dbCommand;
  const tokens = tokenUseCases({ tokens: repos.tokens, clock: systemClock, ids: systemIds });
  const operational = operationalEvents({
    repos,
    clock: systemClock,
    events,
    logger: logger.child({ component: "operational" }),
    failingAfterMs: config.failingAfterMs,
  });
  const brokerLogger = logger.child({ component: "destinations" });
  const brokers = brokerSenders((options.makeBrokerSenders ?? makeBrokerSenders)(config, brokerLogger), {
    logger: brokerLogger,
    clock: systemClock,
  });
  const endpoints = endpointUseCases(deps, {
    disabled: (id) => operational.disabled(id),
    // A producer pooled here for a changed, disabled or deleted endpoint is closed now (best effort).
    released: (id) => void brokers.release(id),
  });
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
  // `herald listen` sessions held by this process (ADR 29): their streams, and the listen sender's waits.
  const listen = createListenSessions();
  const app = createHttpApp({
    listen,
    endpoints,
    events,
    deliveries: deliveryUseCases(deps),
    tools: endpointTools(deps, events),
    tokens,
    erasures,
    settings,
    ping: () => repos.ping(),
    recording: () => dispatcher?.recording() ?? null,
    wedged: () => liveness?.wedged() ?? null,
    metrics: render,
    logger,
    rateLimit: config.rateLimit ? { limit: config.rateLimit, clock: systemClock } : null,
    publishRateLimit: config.publishRateLimit ? { limit: config.publishRateLimit, clock: systemClock } : null,
    version: VERSION,
    console: {
      use: consoleUse,
      insights: consoleInsights({ ...deps, insights: consoleStore.insights, version: VERSION }),
      portalFrameAncestors: config.portalFrameAncestors,
    },
  });

  const sender = withListenSessions(listen, options.makeSender(config), {
    timeoutMs: config.deliveryTimeoutMs,
    userAgent: `Herald/${VERSION}`,
  });
  dispatcher = createEngine({
    repos,
    clock: systemClock,
    ids: systemIds,
    cipher,
    sender,
    brokers,
    logger: logger.child({ component: "dispatcher" }),
    metrics,
    tracing: deps.tracing,
    // Unique per start: a restarted process is a new member, and its old leases simply expire.
    owner: `${hostName()}:${systemIds.uuid()}`,
    operational,
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
    operational,
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

  // A store started here (embedded, or memory) has no other way to get a first token.
  if (store.startedHere && options.printFirstToken !== false && (await tokens.count()) === 0) {
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
    telemetry,
    giveUp: () => d.giveUp(),
    endStreams: () => listen.close(),
    async stop(graceMs = 10_000) {
      scheduler.stop();
      clearInterval(purgeConsole);
      await d.stop(graceMs);
      // After the drain: what was not acknowledged stays pending and is sent again (ADR 27).
      await brokers.close();
      await sender.close();
      // What is waiting is exported before the process goes (an unreachable collector: 5 s at most).
      await telemetry?.shutdown();
      await store.close();
    },
  };
}

function hostName(): string {
  return globalThis.process?.env?.HOSTNAME ?? "herald";
}
