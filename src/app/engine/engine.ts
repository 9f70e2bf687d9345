import { shardOf } from "../../domain/shards.ts";
import type { Logger } from "../logger.ts";
import type { AttemptResult } from "../ports/deliveries.ts";
import type { DeliveryMetrics, Sender } from "../ports/sending.ts";
import type { Repositories } from "../ports/store.ts";
import type { Clock, Ids, SecretCipher } from "../ports/system.ts";
import { claimDue } from "./claim.ts";
import { decide } from "./decide.ts";
import { fifoHeads } from "./fifo.ts";
import { shardOwnership } from "./ownership.ts";
import { pacer } from "./pace.ts";
import { preparer } from "./prepare.ts";
import { recorder } from "./record.ts";
import { sendPrepared } from "./send.ts";
import type { Prepared } from "./work.ts";

export interface EngineOptions {
  /** Deliveries in flight in this process. */
  concurrency: number;
  /** Deliveries in flight to one endpoint (exact across processes: an endpoint has one owner). */
  endpointConcurrency: number;
  retryScheduleMs: readonly number[];
  deliveryTimeoutMs: number;
  /**
   * HERALD_LEASE_MARGIN (default 60 s): a shard lease lasts deliveryTimeoutMs + this without renewal,
   * and is renewed every quarter of this. A dead process's shards are taken over after the lease.
   */
  leaseMarginMs?: number;
  /** How often shard ownership is checked (takeovers, rebalancing); default min(1 s, margin / 4). */
  ownershipTickMs?: number;
  /** Most deliveries claimed in one read. */
  batchSize?: number;
  /** Results are written together once this many are waiting, or after flushDelayMs. */
  flushSize?: number;
  flushDelayMs?: number;
  /** After completions, how long to gather freed slots before claiming again. */
  claimDelayMs?: number;
  /**
   * How far ahead a delivery to a rate-limited endpoint may wait for its turn in memory: at least this
   * (default 2 s), longer while claim reads are slow (four reads' time, at most 10 s).
   */
  paceHorizonMs?: number;
}

export interface EngineDeps {
  repos: Repositories;
  clock: Clock;
  ids: Ids;
  cipher: SecretCipher;
  sender: Sender;
  logger: Logger;
  metrics: DeliveryMetrics;
  /** Identifies this process in shard leases and heartbeats; unique per process start. */
  owner: string;
  options: EngineOptions;
}

export interface Dispatcher {
  /** Takes its shards and starts claiming; returns at once. */
  start(): void;
  /** Claims due work now (a publish, a retry, or the safety-net schedule). */
  wake(): void;
  /** Stops claiming, waits up to `graceMs` for in-flight sends, records them, gives every shard back. */
  stop(graceMs: number): Promise<void>;
  /** Resolves once shards are taken, nothing is in flight and nothing is waiting to be written. */
  idle(): Promise<void>;
  readonly inFlight: number;
}

/**
 * The delivery engine as a pipeline: own shards → claim → prepare → send → decide → record. Each stage
 * is a module of this folder; this one holds what the stages share: what is held (in flight or
 * waiting for its record), per endpoint and per shard, and the claim loop.
 */
export function createEngine(deps: EngineDeps): Dispatcher {
  const { repos, clock, logger, metrics, options } = deps;
  const batchSize = options.batchSize ?? 100;
  const claimDelayMs = options.claimDelayMs ?? 2;
  const marginMs = options.leaseMarginMs ?? 60_000;
  // Pauses and clock skew up to this much cannot make two owners start sends in one shard (ADR 9).
  const safetyMs = Math.min(1_000, marginMs / 4);

  let running = false;
  let pumping = false;
  let again = false;
  let pumpDone: Promise<void> = Promise.resolve();
  /** Held deliveries (claimed until recorded), with their shard and endpoint. */
  const held = new Map<string, { shard: number; webhookId: string }>();
  const heldPerShard = new Map<number, number>();
  const heldPerEndpoint = new Map<string, number>();
  const inFlightPerEndpoint = new Map<string, number>();
  let inFlight = 0;
  const idleWaiters: (() => void)[] = [];
  const drainWaiters = new Map<number, (() => void)[]>();

  const bump = <K>(m: Map<K, number>, k: K, by: number) => {
    const n = (m.get(k) ?? 0) + by;
    if (n <= 0) m.delete(k);
    else m.set(k, n);
  };

  const isIdle = () => inFlight === 0 && pace.waiting === 0 && record.waiting === 0 && !pumping;
  const notifyIdle = () => {
    if (isIdle()) for (const w of idleWaiters.splice(0)) w();
  };

  function release(ids: readonly string[]) {
    let ordered = false;
    for (const id of ids) {
      const h = held.get(id);
      if (h === undefined) continue;
      held.delete(id);
      bump(heldPerShard, h.shard, -1);
      bump(heldPerEndpoint, h.webhookId, -1);
      if (!heldPerShard.has(h.shard)) for (const w of drainWaiters.get(h.shard)?.splice(0) ?? []) w();
      if (fifo.isFifo(h.webhookId)) ordered = true;
    }
    // A FIFO endpoint's next event may go once the previous one is recorded.
    if (ordered) wakeSoon();
    notifyIdle();
  }

  const fifo = fifoHeads(
    {
      endpoints: repos.endpoints,
      deliveries: repos.deliveries,
      held: (webhookId) => heldPerEndpoint.get(webhookId) ?? 0,
      wake: () => wakeSoon(),
    },
    { refreshMs: 1_000, recheckMs: 10_000 },
  );

  const record = recorder(
    { repos, clock, logger, recorded: release },
    { size: options.flushSize ?? 200, delayMs: options.flushDelayMs ?? 5, retryMs: 1_000 },
  );
  const prepare = preparer({ repos, cipher: deps.cipher, clock });
  const ownership = shardOwnership(
    {
      shards: repos.shards,
      clock,
      logger,
      metrics,
      processId: deps.owner,
      gained: () => wake(),
      // A read already on its way may answer work of the shard: it lands first (and drops that work,
      // see claimOnce), then what is held of the shard is waited for until it is recorded.
      drain: async (shard) => {
        await claiming;
        pace.giveBackShard(shard);
        if (!heldPerShard.has(shard)) return;
        await new Promise<void>((resolve) => {
          drainWaiters.set(shard, [...(drainWaiters.get(shard) ?? []), resolve]);
          void record.flush();
        });
      },
    },
    {
      leaseMs: options.deliveryTimeoutMs + marginMs,
      claimWindowMs: marginMs - safetyMs,
      renewEveryMs: marginMs / 4,
      tickMs: options.ownershipTickMs ?? Math.min(1_000, marginMs / 4),
      drainMs: options.deliveryTimeoutMs + 5_000,
    },
  );

  function recordResult(r: AttemptResult, effects: Parameters<typeof record.add>[1] = null) {
    metrics.attempt({ status: r.status, error: r.error, durationMs: r.durationMs });
    record.add(r, effects);
  }

  async function attempt(p: Prepared, at: Date): Promise<void> {
    const sent = await sendPrepared(p, deps, at);
    if (p.delivery.attempt === 1 && p.delivery.trigger === "automatic") {
      metrics.publishToAttempt(clock.now().getTime() - p.event.createdAt.getTime());
    }
    const decided = decide(sent, {
      retryScheduleMs: options.retryScheduleMs,
      random: deps.ids.random(),
      now: clock.now(),
    });
    if (
      decided.disable &&
      (await repos.endpoints.disable(decided.endpointId, decided.disable, clock.now()))
    ) {
      metrics.endpointDisabled(decided.disable);
    }
    recordResult(decided.result, decided);
  }

  function run(p: Prepared, at: Date) {
    void attempt(p, at)
      .catch((e) =>
        logger.error("delivery attempt crashed", { error: e as Error, delivery_id: p.delivery.id }),
      )
      .finally(() => {
        inFlight--;
        bump(inFlightPerEndpoint, p.delivery.webhookId, -1);
        if (running) wakeSoon();
        notifyIdle();
      });
  }

  /** Stops holding a claimed delivery without sending it: it stays pending, for a later claim. */
  function unhold(p: Prepared) {
    inFlight--;
    bump(inFlightPerEndpoint, p.delivery.webhookId, -1);
    release([p.delivery.id]);
  }

  // A delivery waiting for its endpoint's rate limit is held (until sent and recorded, or given back)
  // but not in flight: it counts against no concurrency cap while it waits.
  const pace = pacer(
    {
      clock,
      tenure: (shard) => ownership.tenure(shard),
      mayStart: (shard) => ownership.mayClaim(shard),
      start(p, at, waited) {
        if (waited) {
          inFlight++;
          bump(inFlightPerEndpoint, p.delivery.webhookId, 1);
        }
        run(p, at);
      },
      parked(p) {
        inFlight--;
        bump(inFlightPerEndpoint, p.delivery.webhookId, -1);
      },
      giveBack(p, waited) {
        if (waited) release([p.delivery.id]);
        else unhold(p);
      },
      wake: () => wakeSoon(),
    },
    {
      horizonMs: () => Math.min(10_000, Math.max(options.paceHorizonMs ?? 2_000, 4 * lastReadMs)),
      maxWaiting: 100,
    },
  );

  /** Settles when the claim read in progress (if any) has landed. */
  let claiming: Promise<unknown> = Promise.resolve();

  /** How long the last claim read took, and when it ended (ms, this process's monotonic clock). */
  let lastReadMs = 0;
  let lastReadEnd = 0;

  async function claimOnce(): Promise<boolean> {
    const started = performance.now();
    const now = clock.now();
    const reading = (async () => {
      await fifo.refresh();
      const read = await claimDue(
        repos.deliveries,
        {
          now,
          shards: ownership.claimable(),
          room: options.concurrency - inFlight,
          endpointCap: options.endpointConcurrency,
          inFlight: inFlightPerEndpoint,
          rooms: pace.rooms(),
          exclude: fifo.excluded(now.getTime()),
          held: held.keys(),
        },
        batchSize,
      );
      lastReadEnd = performance.now();
      lastReadMs = lastReadEnd - started;
      // FIFO endpoints' work is claimed as their heads, one each (ADR 16).
      return { more: read.more, claimed: await fifo.heads(read.claimed, now) };
    })();
    claiming = reading.catch(() => {});
    const read = await reading;
    // A shard given back (or lost) while the read was on its way is no longer this process's to send.
    const claimed = read.claimed.filter(
      (c) => ownership.mayClaim(shardOf(c.delivery.webhookId)) && !held.has(c.delivery.id),
    );
    if (claimed.length === 0) return false;
    // Held from here until recorded; counted against the caps from here until the send ends.
    for (const { delivery: d } of claimed) {
      const shard = shardOf(d.webhookId);
      held.set(d.id, { shard, webhookId: d.webhookId });
      bump(heldPerShard, shard, 1);
      bump(heldPerEndpoint, d.webhookId, 1);
      bump(inFlightPerEndpoint, d.webhookId, 1);
      inFlight++;
    }
    let prepared: Awaited<ReturnType<typeof prepare>>;
    try {
      prepared = await prepare(claimed);
    } catch (e) {
      for (const { delivery: d } of claimed) {
        inFlight--;
        bump(inFlightPerEndpoint, d.webhookId, -1);
      }
      release(claimed.map((c) => c.delivery.id));
      throw e;
    }
    for (const r of prepared.finished) {
      const d = claimed.find((c) => c.delivery.id === r.id)!.delivery;
      inFlight--;
      bump(inFlightPerEndpoint, d.webhookId, -1);
      recordResult(r);
    }
    // The endpoint was read fresh: one that became FIFO is sent only through its head from now on.
    const heads = new Set(claimed.filter((c) => c.head).map((c) => c.delivery.id));
    const ready = prepared.ready.filter((p) => {
      if (p.endpoint.ordering !== "fifo" || heads.has(p.delivery.id)) return true;
      fifo.learned(p.endpoint.id);
      unhold(p);
      return false;
    });
    pace.admit(ready);
    return read.more;
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
          if (!(await claimOnce())) break;
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

  // Completions free slots one by one, and publishes bring work one event at a time; a read after
  // each would make about one read per delivery. Wake-ups are gathered instead: the next read starts
  // no sooner than twice what the last one took (at least claimDelayMs) after it ended, so reads take
  // at most about a third of the time and each fills what freed up meanwhile. On a database that answers in a
  // millisecond that is a millisecond or two; where reads are slow (FerretDB v1 reads every pending
  // record of a due query) it keeps reads from running back to back.
  let soon: ReturnType<typeof setTimeout> | null = null;
  function wakeSoon() {
    if (soon || !running) return;
    const wait = Math.max(claimDelayMs, lastReadEnd + 2 * lastReadMs - performance.now());
    soon = setTimeout(() => {
      soon = null;
      wake();
    }, wait);
  }

  return {
    start() {
      running = true;
      pace.start();
      fifo.start();
      ownership.start();
      wake();
    },
    wake: wakeSoon,
    async stop(graceMs: number) {
      running = false;
      if (soon) clearTimeout(soon);
      const deadline = Date.now() + graceMs;
      // A claim on its way lands first, so what it took is sent and recorded (or left pending) below.
      await pumpDone;
      // What waits for its endpoint's rate limit stays pending for the next owner.
      pace.stop();
      fifo.stop();
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await record.flush();
      // Every shard is given back at once; what is still in flight is sent again by the next owner.
      await ownership.stop();
    },
    async idle() {
      await ownership.ready();
      // A wake during the first round found no shards yet; claim now that they are taken.
      if (running && !pumping) void pump();
      if (!isIdle()) await new Promise<void>((resolve) => idleWaiters.push(resolve));
      await record.flush();
    },
    get inFlight() {
      return inFlight;
    },
  };
}
