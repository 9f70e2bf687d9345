import { SHARD_COUNT, shardOf } from "../../domain/shards.ts";
import type { AttemptResult } from "../ports/deliveries.ts";
import type { AcceptedWork, StoredWork } from "../ports/sending.ts";
import { attempter } from "./attempt.ts";
import { carriedWork } from "./carried.ts";
import { claimLoop } from "./claim-loop.ts";
import { claimOnce } from "./claim-once.ts";
import type { Dispatcher, EngineDeps } from "./dispatcher.ts";
import { dueReader } from "./due-read.ts";
import { fifoHeads } from "./fifo.ts";
import { handover } from "./handover.ts";
import { holds } from "./holds.ts";
import { idleWaiting } from "./idle.ts";
import { inFlightCounts } from "./in-flight.ts";
import { shardOwnership } from "./ownership.ts";
import { ownershipTiming } from "./ownership-timing.ts";
import { pacer } from "./pace.ts";
import { postponer } from "./postpone.ts";
import { preparer } from "./prepare.ts";
import { dueQueue } from "./queue.ts";
import { readDemand } from "./read-demand.ts";
import { recorder } from "./record.ts";
import { scheduledRead } from "./scheduled-read.ts";

export type { Dispatcher, EngineDeps, EngineOperational, EngineOptions } from "./dispatcher.ts";
export { HANDOVER_FRESH_MS } from "./handover.ts";

/**
 * The delivery engine as a pipeline: own shards → claim → prepare → send → decide → record. Each stage,
 * and each piece of state the stages share, is a module of this folder with one owner (ADR 9, "Who owns
 * the engine's state"); this file is the loop and the wiring between them.
 */
export function createEngine(deps: EngineDeps): Dispatcher {
  const { repos, clock, logger, metrics, options } = deps;
  const op = deps.operational;
  /** Due work stored by other processes in this one's shards is announced through these (ADR 18). */
  const signals = repos.due ?? null;
  const queueSize = options.queueSize ?? 1_000;
  const queueDepth = options.queueDepth ?? Math.max(4 * options.endpointConcurrency, 100);

  const held = holds();
  const inFlight = inFlightCounts();
  /** Due work read but not started yet (held, not in flight). */
  const queue = dueQueue({ depth: queueDepth, maxAgeMs: options.queueMaxAgeMs ?? 10_000 });
  const demand = readDemand(queue);
  /** When the schedule's tick must read: what comes due next, as reads answer it and work written here notes it. */
  const scheduled = scheduledRead();
  const live = () => signals?.live ?? true;
  /** Work written here (a follow-up, a hand-back, a postponed delivery) comes due at `at` (ms). */
  const due = scheduled.noted;
  const idle = idleWaiting(
    () =>
      inFlight.total + queue.size + postponed.pending + pace.waiting + record.waiting === 0 && !loop.pumping,
  );
  /** May the engine take new work now (the one place such limits compose): not while results wait unrecorded. */
  const mayTake = () => inFlight.total < options.concurrency && record.accepting;
  const loop = claimLoop(
    { claimOnce: () => claim(), mayTake, reads: demand.pending, settled: idle.check, logger },
    { claimDelayMs: options.claimDelayMs ?? 2 },
  );
  /** Claims soon; `read` when new work may be in the database, otherwise from the queue alone if it can. */
  const wakeSoon = (read = false) => {
    if (read) demand.all();
    loop.soon();
  };

  function release(ids: readonly string[]) {
    handed.forget(ids);
    // A FIFO endpoint's next event may go once the previous one is recorded: its head is read again.
    if (held.release(ids).some(fifo.isFifo)) wakeSoon(true);
    idle.check();
  }
  /** Lets go of held deliveries unsent: they stay pending and due, for a later read. */
  function letGo(ids: readonly string[]) {
    release(ids);
    if (ids.length > 0) due(clock.now().getTime());
  }
  /** Stops holding a claimed delivery without sending it: it stays pending, for a later claim. */
  function unhold(d: { id: string; webhookId: string }) {
    inFlight.remove(d.webhookId);
    letGo([d.id]);
  }

  const fifo = fifoHeads(
    { ...repos, held: held.ofEndpoint, wake: () => wakeSoon(true) },
    { refreshMs: 1_000, recheckMs: 10_000 },
  );
  // `resumed`: recording keeps up again, so the claims it held back go now (issue 31).
  const resumed = () => wakeSoon(true);
  const record = recorder(
    { repos, clock, logger, recorded: release, resumed, due, announce: op?.announce, cleared: op?.cleared },
    {
      size: options.flushSize ?? 200,
      delayMs: options.flushDelayMs ?? 5,
      batchMs: options.flushBatchMs ?? Math.max(100, options.flushDelayMs ?? 5),
      share: () => ownership.owned / SHARD_COUNT,
      retryMs: 1_000,
    },
  );
  const prepare = preparer({ repos, cipher: deps.cipher, clock });
  const postponed = postponer({
    deliveries: repos.deliveries,
    clock,
    logger,
    done: release,
    due,
    recheck: () => {
      demand.all();
      loop.now();
    },
  });
  const ownership = shardOwnership(
    {
      ...deps,
      shards: repos.shards,
      processId: deps.owner,
      gained: () => wake(),
      // A read already on its way may answer work of the shard: it lands first (and drops that work,
      // see claimOnce), then what is held of the shard is waited for until it is recorded.
      drain: async (shard) => {
        await reader.landed();
        release(queue.drop((id) => shardOf(id) === shard).map((d) => d.id));
        pace.giveBackShard(shard);
        const drained = held.drained(shard);
        if (held.holdsShard(shard)) void record.flush();
        await drained;
      },
    },
    ownershipTiming(options),
  );
  const [running, unread] = [() => loop.running, demand.endpoint];
  // Work other processes' publishes carry here, where the store can (ADR 30).
  const barrier = signals?.barrier?.bind(signals);
  const carried = barrier
    ? carriedWork(
        {
          signals: { barrier },
          ownership,
          fifo,
          holds: held,
          queue,
          queueSize,
          running,
          remember: (e) => prepare.remember(e),
        },
        { clearEveryMs: 5_000, clearAt: 20_000 },
      )
    : null;
  const took = carried?.tookOtherwise;
  const handed = handover({ queue, queueSize, signals, ownership, fifo, holds: held, running, unread, took });
  // A delivery waiting for its endpoint's rate limit is held (until sent and recorded, or given back)
  // but not in flight: it counts against no concurrency cap while it waits.
  const pace = pacer(
    {
      clock,
      tenure: ownership.tenure,
      mayStart: ownership.mayClaim,
      start(p, at, waited) {
        if (waited) inFlight.add(p.delivery.webhookId);
        attempts.run(p, at);
      },
      parked: (p) => inFlight.remove(p.delivery.webhookId),
      giveBack: (p, waited) => (waited ? letGo([p.delivery.id]) : unhold(p.delivery)),
      wake: () => wakeSoon(true),
    },
    {
      horizonMs: () => Math.min(10_000, Math.max(options.paceHorizonMs ?? 2_000, 4 * loop.lastReadMs)),
      maxWaiting: 100,
    },
  );
  const reader = dueReader(
    {
      ...repos,
      clock,
      queue,
      fifo,
      holds: held,
      demand,
      pace,
      ownership,
      release,
      measured: loop.measured,
      took,
      scheduled,
      live,
    },
    { queueSize, queueDepth },
  );

  /** A FIFO endpoint's next event waits for this record: written soon, not batched longer. */
  function recordResult(
    r: AttemptResult,
    webhookId: string,
    effects: Parameters<typeof record.add>[1] = null,
  ) {
    metrics.attempt({ status: r.status, error: r.error, durationMs: r.durationMs });
    record.add(r, effects, fifo.isFifo(webhookId));
  }
  const attempts = attempter({
    ...deps,
    endpoints: repos.endpoints,
    tracing: deps.tracing ?? null,
    retryScheduleMs: options.retryScheduleMs,
    stale: handed.stale,
    record: (decided) => recordResult(decided.result, decided.endpointId, decided),
    ended(p) {
      inFlight.remove(p.delivery.webhookId);
      wakeSoon();
      idle.check();
    },
  });

  /** Stages 2 and 3: claim what fits (reading the database only when it must), prepare it, start it. */
  const claim = claimOnce(
    {
      demand,
      queue,
      inFlight,
      ownership,
      pace,
      fifo,
      prepare,
      release,
      unhold,
      mayTake,
      read: reader.read,
      claim: handed.claim,
      record: recordResult,
      postpone: (waiting) => void postponed.postpone(waiting),
      freed: () => wakeSoon(),
    },
    options,
  );

  /** Claims now, reading the database first: new work may be there. */
  function wake() {
    demand.all();
    loop.now();
  }

  return {
    start() {
      loop.start();
      pace.start();
      fifo.start();
      ownership.start();
      const mine = (id: string) => ownership.tenure(shardOf(id)) !== null;
      // Listening (again, after a loss): what was announced before may be lost, so read now (ADR 30).
      demand.listen(signals, mine, (taken) => loop.soon(taken), carried?.take, wake);
      // Publishes here carry the first deliveries of other processes' shards to them (ADR 30).
      if (carried) signals?.carry?.((id) => !mine(id));
      wake();
    },
    wake(work?: AcceptedWork | StoredWork) {
      if (!work) return wakeSoon(true);
      if (!("event" in work)) return void (handed.stored(work.endpointIds) && loop.soon());
      prepare.remember(work.event);
      // Held back while their event was on its way: the hand-over takes them now, with it.
      held.release(postponed.eventStored(work.deliveries.map((d) => d.id)));
      handed.accept(work);
      loop.soon(true);
    },
    tick() {
      if (scheduled.mustRead(clock.now().getTime(), ownership.claimable(), live())) demand.all();
      // Claims from the queue at least (what waited too long there is read again).
      loop.soon();
    },
    async stop(graceMs: number) {
      demand.unlisten();
      signals?.carry?.(null);
      carried?.stop();
      const deadline = Date.now() + graceMs;
      // At once: the shards go first; what is in flight is sent again by their next owners.
      const givenUp = graceMs <= 0 ? ownership.stop(true) : null;
      // A claim on its way lands first, so what it took is sent and recorded (or left pending) below.
      await loop.stop();
      // What is queued, or waits for its endpoint's rate limit, stays pending for the next owner.
      release(queue.drop(() => true).map((d) => d.id));
      postponed.stop();
      pace.stop();
      fifo.stop();
      await inFlight.none(deadline - Date.now());
      // Results already in are written (at once: if the store answers within a second).
      await Promise.race([record.flush(), ...(givenUp ? [new Promise((r) => setTimeout(r, 1_000))] : [])]);
      // Every shard is given back; what is still in flight is sent again by the next owner.
      await (givenUp ?? ownership.stop());
    },
    giveUp: () => ownership.stop(true),
    recording: () => record.backlog(),
    async idle() {
      await ownership.ready();
      loop.kick(); // a wake during the first round found no shards yet; claim now that they are taken
      await idle.wait();
      await record.flush();
    },
    get inFlight() {
      return inFlight.total;
    },
  };
}
