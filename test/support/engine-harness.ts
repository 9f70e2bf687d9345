import { createAesGcmCipher } from "../../src/adapters/crypto/aes-gcm-cipher.ts";
import { createCertificateReader } from "../../src/adapters/crypto/client-certificates.ts";
import { createSubjectKeys } from "../../src/adapters/crypto/subject-keys.ts";
import { createMemoryRepositories } from "../../src/adapters/memory/repositories.ts";
import { deliveryUseCases } from "../../src/app/deliveries.ts";
import type { AppDeps } from "../../src/app/deps.ts";
import { type BrokerKind, brokerSenders } from "../../src/app/destinations.ts";
import { endpointTools } from "../../src/app/endpoint-tools.ts";
import { endpointUseCases } from "../../src/app/endpoints.ts";
import { createEngine, type EngineOptions } from "../../src/app/engine/engine.ts";
import { erasureUseCases } from "../../src/app/erasures.ts";
import { eventUseCases, type PublishInput } from "../../src/app/events.ts";
import { type Logger, silentLogger } from "../../src/app/logger.ts";
import { maintenanceJobs } from "../../src/app/maintenance.ts";
import { type OperationalEvents, operationalEvents } from "../../src/app/operational.ts";
import type { FanOutMetrics } from "../../src/app/ports/events.ts";
import type { Scope } from "../../src/app/ports/paging.ts";
import type { BrokerSender, DeliveryMetrics, DeliveryRequest, Sender } from "../../src/app/ports/sending.ts";
import type { Repositories } from "../../src/app/ports/store.ts";
import type { SecretCipher } from "../../src/app/ports/system.ts";
import { settingsUseCases } from "../../src/app/settings.ts";
import type { SendOutcome } from "../../src/domain/delivery.ts";

/** The machine's clock, for tests of what happens in real time (rate limits); it cannot be moved. */
export function realClock() {
  return {
    now: () => new Date(),
    advance(_ms: number): void {
      throw new Error("a real clock cannot be moved");
    },
  };
}

/** A clock the test moves by hand. */
export function manualClock(start = new Date("2026-11-21T10:00:00.000Z")) {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    advance(ms: number) {
      now += ms;
    },
  };
}

export type Script = (
  req: DeliveryRequest,
  n: number,
) => Partial<SendOutcome> | Promise<Partial<SendOutcome>>;

/** A sender whose answers a test scripts; it records every request. */
export function scriptedSender(script: Script = () => ({ ok: true, responseStatus: 200 })) {
  const requests: DeliveryRequest[] = [];
  let current = script;
  const sender: Sender & { requests: DeliveryRequest[]; script(s: Script): void } = {
    requests,
    script(s) {
      current = s;
    },
    async send(req) {
      requests.push(req);
      const o = await current(req, requests.length);
      return {
        ok: o.ok ?? false,
        responseStatus: o.responseStatus ?? null,
        responseBody: o.responseBody ?? null,
        error: o.error ?? (o.ok ? null : "http_status"),
        durationMs: o.durationMs ?? 1,
        retryAfterMs: o.retryAfterMs ?? null,
      };
    },
    async close() {},
  };
  return sender;
}

export function countingMetrics() {
  const seen = {
    attempts: [] as { status: string; error: string | null }[],
    disabled: [] as string[],
    /** Endpoints left out of fan-outs by their filter, per event type. */
    filtered: {} as Record<string, number>,
  };
  const metrics: DeliveryMetrics = {
    attempt: (o) => seen.attempts.push({ status: o.status, error: o.error }),
    leaseRecovered: () => {},
    shardsOwned: () => {},
    endpointDisabled: (r) => seen.disabled.push(r),
    publishToAttempt: () => {},
  };
  const fanOut: FanOutMetrics = {
    eventsFiltered: (type, n) => {
      seen.filtered[type] = (seen.filtered[type] ?? 0) + n;
    },
  };
  return { metrics, fanOut, seen };
}

export const SCOPE: Scope = {
  tenantId: "11111111-1111-4111-8111-111111111111",
  projectId: "22222222-2222-4222-8222-222222222222",
};

export const sampleMessage = (status = "delivered") => ({
  message_id: "6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10",
  status,
  channel: "email",
  message_type: "transactional",
  recipient: "ada@example.com",
});

/** A message.delivered event as published to the API, with a message id of its own; `more` joins its data. */
export const deliveredEvent = (more: Record<string, unknown> = {}) => ({
  type: "message.delivered",
  data: { ...sampleMessage(), message_id: crypto.randomUUID(), ...more },
});

/** Use cases, dispatcher and maintenance on one store, with a manual clock and a scripted sender. */
export async function engineHarness(
  opts: {
    repos?: Repositories;
    options?: Partial<EngineOptions>;
    sender?: ReturnType<typeof scriptedSender>;
    /** The real clock instead of the manual one. */
    realTime?: boolean;
    /** The process id in shard leases (several engines on one store need different ones). */
    owner?: string;
    /** The master key's cipher (several engines on one store share one, as processes share the key). */
    cipher?: SecretCipher;
    /** HERALD_FAILING_AFTER (default 1 h). */
    failingAfterMs?: number;
    /** The dispatcher's logger (default silent). */
    logger?: Logger;
    /** Broker senders by kind (ADR 27); default none. */
    brokers?: Partial<Record<BrokerKind, BrokerSender>>;
  } = {},
) {
  const repos = opts.repos ?? createMemoryRepositories();
  const clock = opts.realTime ? realClock() : manualClock();
  const ids = {
    uuid: () => crypto.randomUUID(),
    randomBytes: (n: number) => crypto.getRandomValues(new Uint8Array(n)),
    random: () => 0.5,
  };
  const cipher = opts.cipher ?? (await createAesGcmCipher(crypto.getRandomValues(new Uint8Array(32))));
  const sender = opts.sender ?? scriptedSender();
  const { metrics, fanOut, seen } = countingMetrics();
  let wakes = 0;
  // Made once the event use cases exist, which need the dispatcher: bound late, as herald.ts does.
  let operational: OperationalEvents | null = null;
  const brokers = brokerSenders(opts.brokers ?? {}, { logger: opts.logger ?? silentLogger, clock });
  const dispatcher = createEngine({
    repos,
    clock,
    ids,
    cipher,
    sender,
    brokers,
    logger: opts.logger ?? silentLogger,
    metrics,
    owner: opts.owner ?? "test",
    operational: {
      announce: (exhausted, ended) => operational!.announce(exhausted, ended),
      cleared: (unreported) => operational!.cleared(unreported),
      disabled: (id) => operational!.disabled(id),
    },
    options: {
      concurrency: 50,
      endpointConcurrency: 10,
      retryScheduleMs: [5_000, 30_000],
      deliveryTimeoutMs: 1_000,
      ...opts.options,
    },
  });
  const deps: AppDeps = {
    repos,
    clock,
    ids,
    cipher,
    subjects: await createSubjectKeys(crypto.getRandomValues(new Uint8Array(32))),
    certificates: createCertificateReader(),
    signal: {
      notify: (accepted) => {
        wakes++;
        dispatcher.wake(accepted);
      },
    },
    policy: { allowHttpUrls: false, allowPrivateNetworks: false },
  };
  const events = eventUseCases(deps, fanOut);
  const ops = operationalEvents({
    repos,
    clock,
    events,
    logger: silentLogger,
    failingAfterMs: opts.failingAfterMs ?? 3_600_000,
  });
  operational = ops;
  const jobs = maintenanceJobs({
    repos,
    clock,
    events,
    metrics,
    logger: silentLogger,
    disableAfterMs: 86_400_000,
    retentionMs: 30 * 86_400_000,
    operational: ops,
  });
  return {
    repos,
    cipher,
    clock,
    sender,
    seen,
    dispatcher,
    jobs,
    endpoints: endpointUseCases(deps, {
      disabled: (id) => ops.disabled(id),
      released: (id) => void brokers.release(id),
    }),
    events,
    operational: ops,
    deliveries: deliveryUseCases(deps),
    tools: endpointTools(deps, events),
    erasures: erasureUseCases(deps),
    settings: settingsUseCases({ settings: repos.settings, clock, maxRetentionMs: 30 * 86_400_000 }),
    wakes: () => wakes,
    /**
     * A publish by a version before ADR 2's change (event first, flagged fanoutPending, then its
     * deliveries) whose process died between the two: the event stored, flagged, without deliveries.
     */
    async publishDyingAsEarlierVersion(input: PublishInput) {
      const insertMany = repos.deliveries.insertMany.bind(repos.deliveries);
      const insert = repos.events.insert.bind(repos.events);
      repos.deliveries.insertMany = async () => {};
      repos.events.insert = (event) => insert({ ...event, fanoutPending: true });
      try {
        return await events.publish(SCOPE, input);
      } finally {
        repos.deliveries.insertMany = insertMany;
        repos.events.insert = insert;
      }
    },
    /** A publish whose process dies after storing its deliveries, before its event: it is never answered. */
    async publishDyingBeforeEvent(input: PublishInput) {
      const insert = repos.events.insert.bind(repos.events);
      repos.events.insert = async () => {
        throw new Error("process died");
      };
      try {
        await events.publish(SCOPE, input);
      } catch {
        return;
      } finally {
        repos.events.insert = insert;
      }
      throw new Error("the publish was answered although its event could not be stored");
    },
    /** Wakes the dispatcher and waits until everything due has been sent and recorded. */
    async drain() {
      dispatcher.wake();
      await dispatcher.idle();
    },
    async history(webhookId: string) {
      const page = await repos.deliveries.list(SCOPE, webhookId, {}, { limit: 100, cursor: null });
      return page.data.sort((a, b) => a.attempt - b.attempt);
    },
  };
}
