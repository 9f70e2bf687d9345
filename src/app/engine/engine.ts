import type { Delivery } from "../../domain/delivery.ts";
import type { Endpoint } from "../../domain/endpoint.ts";
import type { OperationalNotice } from "../../domain/operational.ts";
import { shardOf } from "../../domain/shards.ts";
import type { Logger } from "../logger.ts";
import type { AttemptResult } from "../ports/deliveries.ts";
import type { AcceptedWork, DeliveryMetrics, Sender } from "../ports/sending.ts";
import type { Repositories } from "../ports/store.ts";
import type { Clock, Ids, SecretCipher } from "../ports/system.ts";
import type { Tracing } from "../ports/tracing.ts";
import { pickWithinRoom, readDue, roomRule } from "./claim.ts";
import { decide } from "./decide.ts";
import { fifoHeads } from "./fifo.ts";
import { shardOwnership } from "./ownership.ts";
import { pacer } from "./pace.ts";
import { EVENT_RECHECK_MS, preparer } from "./prepare.ts";
import { dueQueue } from "./queue.ts";
import { type RecordingBacklog, recorder } from "./record.ts";
import { sendPrepared } from "./send.ts";
import { traceAttempt } from "./trace.ts";
import type { Claimed, Prepared } from "./work.ts";

/**
 * How long an endpoint handed over by a publish (read by it moments before) may stand in for a read of
 * it: a first attempt taken from the queue later than this after the hand-over reads its endpoint as
 * every other attempt does (ADR 9, "The publish hand-over").
 */
export const HANDOVER_FRESH_MS = 1_000;

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
  /** Most due deliveries read at once, and kept queued in memory in all (default 1,000). */
  queueSize?: number;
  /** Most due deliveries of one endpoint kept queued (default 4 × endpointConcurrency, at least 100). */
  queueDepth?: number;
  /** A queued delivery not started within this is let go and read again (default 10 s). */
  queueMaxAgeMs?: number;
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
  /** Spans of each attempt, children of the publish's fan-out (ADR 24); null or absent when tracing is off. */
  tracing?: Tracing | null;
  /** Identifies this process in shard leases and heartbeats; unique per process start. */
  owner: string;
  options: EngineOptions;
  /** Operational events (ADR 20); absent: none are emitted. */
  operational?: EngineOperational;
}

/** What the engine hands to the operational events (src/app/operational.ts). */
export interface EngineOperational {
  /** Publishes what recorded results owe: see the recorder's `announce`. */
  announce(
    exhausted: readonly OperationalNotice[],
    streaksEnded: readonly string[],
  ): Promise<readonly Endpoint[]>;
  /** After the streaks `announce` answered were cleared: see the recorder's `cleared`. */
  cleared(unreported: readonly Endpoint[]): Promise<void>;
  /** An endpoint was just disabled (410 Gone): its endpoint.disabled is due. Returns at once. */
  disabled(endpointId: string): void;
}

export interface Dispatcher {
  /** Takes its shards and starts claiming; returns at once. */
  start(): void;
  /**
   * Claims due work soon (a publish, a retry, or the safety-net schedule). A publish in this process
   * hands over what it stored: the event is kept for its first attempts, and its first deliveries of
   * the shards this process owns are queued as they are, with the endpoints the publish read, so they
   * are sent without a due read or an endpoints read. Only the rest (FIFO endpoints, other owners'
   * shards, what the queue has no room for) is read from the database (ADR 9).
   */
  wake(accepted?: AcceptedWork): void;
  /** Stops claiming, waits up to `graceMs` for in-flight sends, records them, gives every shard back. */
  stop(graceMs: number): Promise<void>;
  /** Resolves once shards are taken, nothing is in flight and nothing is waiting to be written. */
  idle(): Promise<void>;
  readonly inFlight: number;
  /** How far behind recording results is (/readyz, /metrics). */
  recording(): RecordingBacklog;
}

/**
 * The delivery engine as a pipeline: own shards → claim → prepare → send → decide → record. Each stage
 * is a module of this folder; this one holds what the stages share: what is held (in flight or
 * waiting for its record), per endpoint and per shard, and the claim loop.
 */
export function createEngine(deps: EngineDeps): Dispatcher {
  const { repos, clock, logger, metrics, options } = deps;
  const tracing = deps.tracing ?? null;
  /** Due work stored by other processes in this one's shards is announced through this (ADR 18). */
  const signals = repos.due ?? null;
  let unlisten: (() => void) | null = null;
  const queueSize = options.queueSize ?? 1_000;
  const queueDepth = options.queueDepth ?? Math.max(4 * options.endpointConcurrency, 100);
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
  /** Due work read but not started yet (held, not in flight). */
  const queue = dueQueue({ depth: queueDepth, maxAgeMs: options.queueMaxAgeMs ?? 10_000 });
  /**
   * The database may hold due work this process has not read: something was published, a retry's time
   * came (the schedule's wake-up), a shard was gained, or the last read's page was full.
   */
  let fresh = true;
  /** Endpoints a publish in this process just stored work for that it could not hand over (a narrower `fresh`). */
  const freshFor = new Set<string>();
  /**
   * Queued first deliveries handed over by a publish in this process, with the endpoint it read and
   * when (performance.now()); an entry lives as long as its delivery is queued.
   */
  const handed = new Map<string, { endpoint: Endpoint; at: number }>();
  const idleWaiters: (() => void)[] = [];
  const drainWaiters = new Map<number, (() => void)[]>();

  const bump = <K>(m: Map<K, number>, k: K, by: number) => {
    const n = (m.get(k) ?? 0) + by;
    if (n <= 0) m.delete(k);
    else m.set(k, n);
  };

  /** Writes moving deliveries whose event is not stored yet (postpone) still on their way. */
  let postponing = 0;
  const isIdle = () =>
    inFlight === 0 &&
    queue.size === 0 &&
    postponing === 0 &&
    pace.waiting === 0 &&
    record.waiting === 0 &&
    !pumping;
  const notifyIdle = () => {
    if (isIdle()) for (const w of idleWaiters.splice(0)) w();
  };

  function release(ids: readonly string[]) {
    let ordered = false;
    for (const id of ids) {
      const h = held.get(id);
      if (h === undefined) continue;
      held.delete(id);
      handed.delete(id);
      bump(heldPerShard, h.shard, -1);
      bump(heldPerEndpoint, h.webhookId, -1);
      if (!heldPerShard.has(h.shard)) for (const w of drainWaiters.get(h.shard)?.splice(0) ?? []) w();
      if (fifo.isFifo(h.webhookId)) ordered = true;
    }
    // A FIFO endpoint's next event may go once the previous one is recorded: its head is read again.
    if (ordered) wakeSoon(true);
    notifyIdle();
  }

  const fifo = fifoHeads(
    {
      endpoints: repos.endpoints,
      deliveries: repos.deliveries,
      held: (webhookId) => heldPerEndpoint.get(webhookId) ?? 0,
      wake: () => wakeSoon(true),
    },
    { refreshMs: 1_000, recheckMs: 10_000 },
  );

  const record = recorder(
    {
      repos,
      clock,
      logger,
      recorded: release,
      // Recording keeps up again: the claims it held back go now (issue 31).
      resumed: () => wakeSoon(true),
      ...(deps.operational ? { announce: deps.operational.announce, cleared: deps.operational.cleared } : {}),
    },
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
        release(queue.drop((id) => shardOf(id) === shard).map((d) => d.id));
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
    const span = tracing === null ? null : traceAttempt(tracing, p);
    const sent = await sendPrepared(p, deps, at, span?.traceparent);
    if (p.delivery.attempt === 1 && p.delivery.trigger === "automatic") {
      metrics.publishToAttempt(clock.now().getTime() - p.event.createdAt.getTime());
    }
    const decided = decide(sent, {
      retryScheduleMs: options.retryScheduleMs,
      random: deps.ids.random(),
      now: clock.now(),
    });
    span?.end(decided.result);
    if (decided.disable) {
      // What a publish read of the endpoint no longer holds: its queued first attempts read it again.
      for (const h of handed.values())
        if (h.endpoint.id === decided.endpointId) h.at = Number.NEGATIVE_INFINITY;
      if (await repos.endpoints.disable(decided.endpointId, decided.disable, clock.now())) {
        metrics.endpointDisabled(decided.disable);
        deps.operational?.disabled(decided.endpointId);
      }
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
      wake: () => wakeSoon(true),
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

  /**
   * Deliveries whose event is not stored yet (a publish on its way, or one that died between its two
   * writes) are moved a few seconds on, then let go; the due read finds them again then. Rare: it
   * costs one write per batch of them.
   */
  function postpone(waiting: readonly Delivery[]) {
    for (const d of waiting) {
      inFlight--;
      bump(inFlightPerEndpoint, d.webhookId, -1);
    }
    const ids = waiting.map((d) => d.id);
    postponing++;
    void repos.deliveries
      .postpone(ids, new Date(clock.now().getTime() + EVENT_RECHECK_MS))
      .catch((e) =>
        logger.warn("postponing deliveries whose event is not stored failed", { error: e as Error }),
      )
      .finally(() => {
        postponing--;
        release(ids);
      });
  }

  /** Holds a delivery from here until it is recorded or let go. */
  function hold(d: Delivery) {
    const shard = shardOf(d.webhookId);
    held.set(d.id, { shard, webhookId: d.webhookId });
    bump(heldPerShard, shard, 1);
    bump(heldPerEndpoint, d.webhookId, 1);
  }

  /**
   * One read of due work into the queue (FIFO endpoints' work comes back as their heads, which are not
   * queued: each is sent at once or not at all). Answers whether the page was full.
   */
  async function readIntoQueue(room: number): Promise<{ heads: Claimed[]; more: boolean }> {
    const started = performance.now();
    const now = clock.now();
    const t = now.getTime();
    const reading = (async () => {
      await fifo.refresh();
      // An endpoint that became FIFO is sent only through its head from now on.
      release(queue.drop(fifo.isFifo).map((d) => d.id));
      const exclude = new Set([...queue.full(), ...fifo.excluded(t)]);
      // Out of turns for now: left out of the read, so they do not fill the page (ADR 16).
      for (const [id, turns] of pace.rooms()) if (turns <= 0) exclude.add(id);
      queue.reading(exclude);
      fresh = false;
      freshFor.clear();
      const read = await readDue(repos.deliveries, {
        now,
        shards: ownership.claimable(),
        limit: Math.min(queueSize, Math.max(room, queueSize - queue.size)),
        perEndpoint: queueDepth,
        exclude,
        held: held.entries(),
      }).catch((e: unknown) => {
        // Nothing was read: whatever made this read worth making still holds.
        fresh = true;
        throw e;
      });
      lastReadEnd = performance.now();
      lastReadMs = lastReadEnd - started;
      if (read.more) fresh = true;
      // A shard given back (or lost) while the read was on its way is no longer this process's to send.
      const mine = read.due.filter((d) => ownership.mayClaim(shardOf(d.webhookId)) && !held.has(d.id));
      for (const d of queue.add(
        mine.filter((d) => !fifo.isFifo(d.webhookId)),
        performance.now(),
      ))
        hold(d);
      // FIFO endpoints' work is claimed as their heads, one each (ADR 16).
      const heads = await fifo.heads(
        mine.filter((d) => fifo.isFifo(d.webhookId)).map((delivery) => ({ delivery })),
        now,
      );
      const ours = heads.filter(
        (c) => ownership.mayClaim(shardOf(c.delivery.webhookId)) && !held.has(c.delivery.id),
      );
      for (const c of ours) hold(c.delivery);
      return { heads: ours, more: read.more };
    })();
    claiming = reading.catch(() => {});
    return reading;
  }

  /**
   * Queues a publish's first deliveries as it wrote them, for the shards this process may claim from
   * now: the same as a due read finding them, without the read (ADR 9, "The publish hand-over"). Held
   * from here like anything read, so a read already on its way drops its copy when it lands (claims
   * run one at a time, and a queued delivery is taken only by the claim after that read), and later
   * reads leave it out until it is recorded. What is not queued here is read the existing way.
   */
  function handOver(accepted: AcceptedWork): void {
    const endpoints = new Map(accepted.endpoints.map((e) => [e.id, e]));
    const direct: Delivery[] = [];
    /** Endpoints of shards this process does not hold that got work: told to their owners where the store can. */
    const theirs = new Set<string>();
    for (const d of accepted.deliveries) {
      const endpoint = endpoints.get(d.webhookId);
      const shard = shardOf(d.webhookId);
      if (signals?.live && ownership.tenure(shard) === null) theirs.add(d.webhookId);
      else if (
        running &&
        endpoint !== undefined &&
        // FIFO endpoints send only through their head, in order (ADR 16): left to the due read.
        endpoint.ordering !== "fifo" &&
        !fifo.isFifo(d.webhookId) &&
        ownership.mayClaim(shard) &&
        d.status === "pending" &&
        !held.has(d.id) &&
        queue.size + direct.length < queueSize
      )
        direct.push(d);
      else freshFor.add(d.webhookId);
    }
    // Their owner reads them when told; a read here would find none of them (it reads this process's shards).
    if (theirs.size > 0) signals!.announce([...theirs]);
    const at = performance.now();
    // A lane at its depth keeps none of them and is marked cut: the rest is read once it runs low.
    for (const d of queue.add(direct, at)) {
      hold(d);
      handed.set(d.id, { endpoint: endpoints.get(d.webhookId)!, at });
    }
  }

  /** Whether the database may hold due work this process should read now. */
  function mustRead(): boolean {
    if (fresh || queue.runningLow()) return true;
    for (const id of freshFor) {
      if (!queue.isFull(id)) return true;
      // Enough queued for now: what was just stored is read once the lane runs low.
      queue.markCut(id);
      freshFor.delete(id);
    }
    return false;
  }

  async function claimOnce(): Promise<boolean> {
    let heads: Claimed[] = [];
    let more = false;
    if (mustRead()) ({ heads, more } = await readIntoQueue(options.concurrency - inFlight));
    // What is queued of shards this process may no longer claim from is let go, unsent.
    release(queue.drop((id) => !ownership.mayClaim(shardOf(id))).map((d) => d.id));
    const mayTake = roomRule(options.endpointConcurrency, inFlightPerEndpoint, pace.rooms());
    const room = options.concurrency - inFlight;
    const startHeads = pickWithinRoom(
      heads.map((c) => c.delivery),
      room,
      mayTake,
    );
    const headIds = new Set(startHeads.map((d) => d.id));
    // Heads with no room now stay pending; the next read finds them again.
    release(heads.filter((c) => !headIds.has(c.delivery.id)).map((c) => c.delivery.id));
    const { taken, expired } = queue.take(room - startHeads.length, mayTake, performance.now());
    if (expired.length > 0) {
      release(expired.map((d) => d.id));
      fresh = true;
    }
    const takenAt = performance.now();
    const claimed: Claimed[] = [
      ...startHeads.map((delivery) => ({ delivery, head: true })),
      ...taken.map((delivery): Claimed => {
        const h = handed.get(delivery.id);
        if (!h) return { delivery };
        handed.delete(delivery.id);
        return takenAt - h.at <= HANDOVER_FRESH_MS ? { delivery, endpoint: h.endpoint } : { delivery };
      }),
    ];
    if (claimed.length === 0) return more && inFlight < options.concurrency;
    // Counted against the caps from here until the send ends.
    for (const { delivery: d } of claimed) {
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
    // Finished without a send, their slots are free as a completion's are: what is queued behind them goes next.
    if (prepared.finished.length > 0) wakeSoon();
    if (prepared.waiting.length > 0) postpone(prepared.waiting);
    // The endpoint was read fresh: one that became FIFO is sent only through its head from now on.
    const ready = prepared.ready.filter((p) => {
      if (p.endpoint.ordering !== "fifo" || headIds.has(p.delivery.id)) return true;
      fifo.learned(p.endpoint.id);
      release(queue.drop((id) => id === p.endpoint.id).map((d) => d.id));
      unhold(p);
      return false;
    });
    pace.admit(ready);
    return more && inFlight < options.concurrency;
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
        // No new work while its results could not be recorded (back-pressure, issue 31).
        while (running && inFlight < options.concurrency && record.accepting) {
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

  /** Claims now, reading the database first: new work may be there. */
  function wake() {
    fresh = true;
    if (running) void pump();
  }

  // Completions free slots one by one, and publishes bring work one event at a time; a claim after
  // each would make about one read per delivery. Wake-ups are gathered instead: the next claim starts
  // no sooner than twice what the last read took (at least claimDelayMs) after it ended, so reads take
  // at most about a third of the time and each claim fills what freed up meanwhile. On a database that
  // answers in a millisecond that is a millisecond or two; where reads are slow (FerretDB v1 reads every
  // pending record of a due query) it keeps reads from running back to back. A claim reads the database
  // only when new work may be there (see `fresh`) or a queued endpoint runs low; otherwise it is served
  // from the queue, and costs only the read of the endpoints it starts work for (prepare).
  /** Cancels the claim that is due at soonAt; null when none is. */
  let cancelSoon: (() => void) | null = null;
  let soonAt = 0;
  /** Claims soon; `read` when new work may be in the database, otherwise from the queue alone if it can. */
  function wakeSoon(read = false, handedOver = false) {
    if (read) fresh = true;
    if (!running) return;
    // A claim that will not read is not spaced by the reads' time: waiting out a slow read (a three-process
    // due read of 15 ms made hand-overs wait 30 ms) only delays sends whose work is already queued. A
    // publish's hand-over goes once the I/O already waiting is handled; freed slots are still gathered for
    // claimDelayMs.
    const reads = fresh || freshFor.size > 0 || queue.runningLow();
    const wait = reads
      ? Math.max(claimDelayMs, lastReadEnd + 2 * lastReadMs - performance.now())
      : handedOver
        ? 0
        : claimDelayMs;
    const at = performance.now() + wait;
    // A claim already due sooner serves this wake too; one due later is brought forward.
    if (cancelSoon) {
      if (soonAt <= at) return;
      cancelSoon();
    }
    soonAt = at;
    const claim = () => {
      cancelSoon = null;
      if (running) void pump();
    };
    // Not a timer of 0: timers fire a millisecond later at best, a millisecond added to every first attempt.
    if (wait <= 0 && typeof setImmediate === "function") {
      const next = setImmediate(claim);
      cancelSoon = () => clearImmediate(next);
    } else {
      const timer = setTimeout(claim, wait);
      cancelSoon = () => clearTimeout(timer);
    }
  }

  return {
    start() {
      running = true;
      pace.start();
      fifo.start();
      ownership.start();
      // Another process stored work in a shard held here: read it now rather than at the next scheduled read.
      // Marked like this process's own publishes: read unless that endpoint's lane is full already.
      unlisten =
        signals?.listen((endpointIds) => {
          let mine = false;
          for (const id of endpointIds) {
            if (ownership.tenure(shardOf(id)) === null) continue;
            freshFor.add(id);
            mine = true;
          }
          if (mine) wakeSoon();
        }) ?? null;
      wake();
    },
    wake(accepted?: AcceptedWork) {
      if (!accepted) return wakeSoon(true);
      prepare.remember(accepted.event);
      handOver(accepted);
      wakeSoon(false, true);
    },
    async stop(graceMs: number) {
      running = false;
      unlisten?.();
      unlisten = null;
      cancelSoon?.();
      cancelSoon = null;
      const deadline = Date.now() + graceMs;
      // A claim on its way lands first, so what it took is sent and recorded (or left pending) below.
      await pumpDone;
      // What is queued, or waits for its endpoint's rate limit, stays pending for the next owner.
      release(queue.drop(() => true).map((d) => d.id));
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
    recording: () => record.backlog(),
  };
}
