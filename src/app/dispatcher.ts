import { nextRetryDelay } from "../domain/backoff.ts";
import { type Delivery, repeatAttempt, type SendOutcome } from "../domain/delivery.ts";
import { activeSecrets, type Endpoint } from "../domain/endpoint.ts";
import { nextDeliveryId } from "../domain/ids.ts";
import { unixSeconds } from "../domain/time.ts";
import type { Logger } from "./logger.ts";
import type { AttemptResult, LeasedDelivery } from "./ports/deliveries.ts";
import type { StoredEvent } from "./ports/events.ts";
import type { DeliveryMetrics, Sender } from "./ports/sending.ts";
import type { Repositories } from "./ports/store.ts";
import type { Clock, Ids, SecretCipher } from "./ports/system.ts";

export interface DispatcherOptions {
  /** Deliveries in flight in this process. */
  concurrency: number;
  /** Deliveries in flight to one endpoint from this process. */
  endpointConcurrency: number;
  retryScheduleMs: readonly number[];
  deliveryTimeoutMs: number;
  /**
   * How much longer than `deliveryTimeoutMs` a lease lasts (default 60 s): room for claiming, signing
   * and recording around the send. A crashed process's deliveries are claimed again once it has passed.
   */
  leaseMarginMs?: number;
  /** Most deliveries claimed in one round trip. */
  batchSize?: number;
  /** Results are written together once this many are waiting, or after flushDelayMs. */
  flushSize?: number;
  flushDelayMs?: number;
  /** After completions, how long to gather freed slots before claiming again. */
  claimDelayMs?: number;
}

export interface DispatcherDeps {
  repos: Repositories;
  clock: Clock;
  ids: Ids;
  cipher: SecretCipher;
  sender: Sender;
  logger: Logger;
  metrics: DeliveryMetrics;
  /** Identifies this process in leases. */
  owner: string;
  options: DispatcherOptions;
}

export interface Dispatcher {
  /** Starts claiming; returns at once. */
  start(): void;
  /** Claims due work now (a publish, a retry, or the safety-net schedule). */
  wake(): void;
  /** Stops claiming, waits up to `graceMs` for in-flight sends, records them, gives back the rest. */
  stop(graceMs: number): Promise<void>;
  /** Resolves once nothing is in flight and nothing is waiting to be written (tests, benchmark). */
  idle(): Promise<void>;
  readonly inFlight: number;
}

interface Work {
  delivery: LeasedDelivery;
  event: StoredEvent;
  endpoint: Endpoint;
}

/**
 * The delivery engine: leases due deliveries in batches, sends them with a global and a per-endpoint cap,
 * records every attempt, schedules the next automatic attempt on failure, and gives up after the last.
 */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { repos, clock, sender, logger, metrics, options } = deps;
  const batchSize = options.batchSize ?? 100;
  const flushSize = options.flushSize ?? 200;
  const flushDelayMs = options.flushDelayMs ?? 5;
  const claimDelayMs = options.claimDelayMs ?? 2;
  // A lease outlives the longest send by a wide margin; an expired lease means the owner died.
  const leaseMs = options.deliveryTimeoutMs + (options.leaseMarginMs ?? 60_000);

  let running = false;
  let pumping = false;
  /** Settles when the current pump (claim loop) has finished. */
  let pumpDone: Promise<void> = Promise.resolve();
  let again = false;
  let inFlight = 0;
  const perEndpoint = new Map<string, number>();
  const leased = new Map<string, LeasedDelivery>();
  const pendingResults: AttemptResult[] = [];
  const endpointSucceeded = new Set<string>();
  const endpointFailed = new Set<string>();
  let flushTimer: ReturnType<typeof setTimeout> | null = null;
  let flushing: Promise<void> = Promise.resolve();
  const secretCache = new Map<string, string>();
  const idleWaiters: (() => void)[] = [];

  const openSecret = async (sealed: string) => {
    let plain = secretCache.get(sealed);
    if (plain === undefined) {
      plain = await deps.cipher.open(sealed);
      if (secretCache.size > 10_000) secretCache.clear();
      secretCache.set(sealed, plain);
    }
    return plain;
  };

  const notifyIdle = () => {
    if (inFlight === 0 && pendingResults.length === 0 && !pumping) {
      for (const w of idleWaiters.splice(0)) w();
    }
  };

  function scheduleFlush() {
    if (pendingResults.length >= flushSize) {
      void flush();
    } else if (!flushTimer) {
      flushTimer = setTimeout(() => void flush(), flushDelayMs);
    }
  }

  function flush(): Promise<void> {
    if (flushTimer) {
      clearTimeout(flushTimer);
      flushTimer = null;
    }
    flushing = flushing.then(async () => {
      const results = pendingResults.splice(0);
      const ok = [...endpointSucceeded];
      const failed = [...endpointFailed];
      endpointSucceeded.clear();
      endpointFailed.clear();
      if (results.length === 0 && ok.length === 0 && failed.length === 0) return;
      try {
        await repos.deliveries.complete(results);
        if (ok.length) await repos.endpoints.markSucceeded(ok);
        if (failed.length) await repos.endpoints.markFailing(failed, clock.now());
      } catch (e) {
        // The records stay pending under our lease; when it expires another claim sends them again.
        logger.error("recording delivery results failed", { error: e as Error, count: results.length });
      }
      for (const r of results) leased.delete(r.id);
      notifyIdle();
    });
    return flushing;
  }

  function record(result: AttemptResult) {
    pendingResults.push(result);
    metrics.attempt({ status: result.status, error: result.error, durationMs: result.durationMs });
    scheduleFlush();
  }

  const finished = (
    d: LeasedDelivery,
    status: AttemptResult["status"],
    outcome: Partial<SendOutcome> & { attemptedAt?: Date | null } = {},
    next: Delivery | null = null,
  ): AttemptResult => ({
    id: d.id,
    leaseOwner: d.leaseOwner,
    status,
    responseStatus: outcome.responseStatus ?? null,
    responseBody: outcome.responseBody ?? null,
    error: outcome.error ?? null,
    durationMs: outcome.durationMs ?? null,
    attemptedAt: outcome.attemptedAt ?? null,
    nextAttemptAt: next ? next.scheduledAt : null,
    next,
  });

  async function attempt(work: Work): Promise<void> {
    const { delivery: d, event, endpoint } = work;
    const attemptedAt = clock.now();
    let outcome: SendOutcome;
    try {
      const sealed = activeSecrets(endpoint.secrets, attemptedAt);
      // Opened secrets are cached: once an endpoint's are, an attempt waits on nothing before sending.
      const cached = sealed.map((s) => secretCache.get(s.sealed));
      const secrets = cached.every((x) => x !== undefined)
        ? cached
        : await Promise.all(sealed.map((s) => openSecret(s.sealed)));
      outcome = await sender.send({
        url: endpoint.url,
        body: event.body,
        eventId: event.id,
        secrets,
        timestamp: unixSeconds(attemptedAt),
      });
    } catch (e) {
      logger.error("sender failed unexpectedly", { error: e as Error, delivery_id: d.id });
      outcome = {
        ok: false,
        responseStatus: null,
        responseBody: null,
        error: "connection_error",
        durationMs: clock.now().getTime() - attemptedAt.getTime(),
        retryAfterMs: null,
      };
    }
    if (d.attempt === 1 && d.trigger === "automatic") {
      metrics.publishToAttempt(clock.now().getTime() - event.createdAt.getTime());
    }
    if (outcome.ok) {
      if (endpoint.failingSince !== null) endpointSucceeded.add(endpoint.id);
      record(finished(d, "succeeded", { ...outcome, attemptedAt }));
      return;
    }
    if (endpoint.failingSince === null) endpointFailed.add(endpoint.id);
    if (outcome.responseStatus === 410) {
      // 410 Gone: the receiver says the endpoint no longer exists; stop at once, no retry.
      if (await repos.endpoints.disable(endpoint.id, "gone", clock.now())) metrics.endpointDisabled("gone");
      record(finished(d, "failed", { ...outcome, attemptedAt }));
      return;
    }
    let next: Delivery | null = null;
    if (d.trigger === "automatic") {
      const delay = nextRetryDelay({
        failedAttempt: d.attempt,
        scheduleMs: options.retryScheduleMs,
        random: deps.ids.random(),
        retryAfterMs: outcome.retryAfterMs,
      });
      if (delay !== null) {
        const at = new Date(clock.now().getTime() + delay);
        next = repeatAttempt(d, {
          id: nextDeliveryId(d.id),
          attempt: d.attempt + 1,
          trigger: "automatic",
          url: endpoint.url,
          scheduledAt: at,
          createdAt: clock.now(),
        });
      }
    }
    record(finished(d, "failed", { ...outcome, attemptedAt }, next));
  }

  function run(work: Work) {
    inFlight++;
    perEndpoint.set(work.endpoint.id, (perEndpoint.get(work.endpoint.id) ?? 0) + 1);
    void attempt(work)
      .catch((e) =>
        logger.error("delivery attempt crashed", { error: e as Error, delivery_id: work.delivery.id }),
      )
      .finally(() => {
        inFlight--;
        const n = (perEndpoint.get(work.endpoint.id) ?? 1) - 1;
        if (n <= 0) perEndpoint.delete(work.endpoint.id);
        else perEndpoint.set(work.endpoint.id, n);
        if (running) wakeSoon();
        notifyIdle();
      });
  }

  async function claimOnce(): Promise<number> {
    const room = options.concurrency - inFlight;
    if (room <= 0) return 0;
    const saturated = [...perEndpoint].filter(([, n]) => n >= options.endpointConcurrency).map(([id]) => id);
    const now = clock.now();
    const claimed = await repos.deliveries.claimDue({
      now,
      owner: deps.owner,
      leaseMs,
      limit: Math.min(batchSize, room),
      excludeWebhookIds: saturated,
      perEndpointLimit: options.endpointConcurrency,
      busy: Object.fromEntries(perEndpoint),
    });
    if (claimed.length === 0) return 0;
    const recovered = claimed.filter((d) => d.recovered).length;
    if (recovered > 0) {
      metrics.leaseRecovered(recovered);
      logger.warn("claimed deliveries whose lease had expired (a process died mid-send)", {
        count: recovered,
      });
    }
    const [events, endpoints] = await Promise.all([
      repos.events.getMany([...new Set(claimed.map((d) => d.eventId))]),
      repos.endpoints.getMany([...new Set(claimed.map((d) => d.webhookId))]),
    ]);
    const eventById = new Map(events.map((e) => [e.id, e]));
    const endpointById = new Map(endpoints.map((e) => [e.id, e]));
    const overflow: LeasedDelivery[] = [];

    for (const d of claimed) {
      leased.set(d.id, d);
      const endpoint = endpointById.get(d.webhookId);
      const event = eventById.get(d.eventId);
      if (!endpoint || !event) {
        // The endpoint was deleted, or the event aged out of retention: nothing is owed any more.
        record(finished(d, "cancelled"));
        continue;
      }
      if (!endpoint.enabled) {
        record(finished(d, "skipped"));
        continue;
      }
      // run() counts the delivery in perEndpoint at once, so this is the endpoint's whole load.
      if ((perEndpoint.get(endpoint.id) ?? 0) >= options.endpointConcurrency) {
        overflow.push(d);
        continue;
      }
      run({ delivery: d, event, endpoint });
    }
    if (overflow.length) {
      for (const d of overflow) leased.delete(d.id);
      await releaseAll(overflow);
    }
    return claimed.length - overflow.length;
  }

  /** Gives leases back, grouped by the claim that took them. */
  async function releaseAll(items: readonly LeasedDelivery[]): Promise<void> {
    const byOwner = new Map<string, string[]>();
    for (const d of items) byOwner.set(d.leaseOwner, [...(byOwner.get(d.leaseOwner) ?? []), d.id]);
    for (const [owner, ids] of byOwner) await repos.deliveries.release(owner, ids);
  }

  async function pump(): Promise<void> {
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    let pumped!: () => void;
    pumpDone = new Promise<void>((resolve) => {
      pumped = resolve;
    });
    try {
      do {
        again = false;
        while (running && inFlight < options.concurrency) {
          const n = await claimOnce();
          if (n === 0) break;
        }
      } while (again && running);
    } catch (e) {
      logger.warn("claiming due deliveries failed; the schedule will try again", { error: e as Error });
    } finally {
      pumping = false;
      pumped();
      notifyIdle();
    }
  }

  function wake() {
    if (running) void pump();
  }

  // Completions free slots one by one; claiming after each would make a database round trip per
  // delivery. They are gathered for a few milliseconds, so one claim fills many slots at once.
  let soon: ReturnType<typeof setTimeout> | null = null;
  function wakeSoon() {
    if (soon || !running) return;
    soon = setTimeout(() => {
      soon = null;
      wake();
    }, claimDelayMs);
  }

  return {
    start() {
      running = true;
      wake();
    },
    wake,
    async stop(graceMs: number) {
      running = false;
      if (soon) clearTimeout(soon);
      const deadline = Date.now() + graceMs;
      // A claim already on its way must land first: what it leases is then sent or given back below,
      // instead of being stranded under our lease (or failing on a closed store) after stop returns.
      await pumpDone;
      while (inFlight > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
      await flush();
      const unfinished = [...leased.values()];
      if (unfinished.length) {
        // Those still in flight are given back; a later claim sends them again (at least once).
        await releaseAll(unfinished).catch(() => {});
      }
      await flushing;
    },
    idle() {
      if (inFlight === 0 && pendingResults.length === 0 && !pumping) return flushing;
      return new Promise<void>((resolve) => idleWaiters.push(resolve)).then(() => flushing);
    },
    get inFlight() {
      return inFlight;
    },
  };
}
