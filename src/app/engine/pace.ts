import {
  nextStartAt,
  type Pace,
  paceIdle,
  paceStarted,
  type RateLimit,
  repace,
  startPace,
  turnsWithin,
} from "../../domain/rate-limit.ts";
import { shardOf } from "../../domain/shards.ts";
import type { Clock } from "../ports/system.ts";
import type { Prepared } from "./work.ts";

/** This process's hold on a shard: the lease generation, and when the round that took it began (ms). */
export interface Tenure {
  generation: number;
  since: number;
}

export interface PacerDeps {
  clock: Clock;
  /** The shard's tenure; null when this process does not hold it. */
  tenure(shard: number): Tenure | null;
  /** Whether this process may start work of the shard now (held, valid, not being given back). */
  mayStart(shard: number): boolean;
  /**
   * Sends the delivery; `at` is when its attempt starts. `waited`: it comes from the queue (see
   * `parked`), so it counts as in flight again from now.
   */
  start(p: Prepared, at: Date, waited: boolean): void;
  /**
   * The delivery waits for its turn: still held (recorded nowhere, given back on a handover), but no
   * longer in flight: it counts against neither HERALD_CONCURRENCY nor the endpoint's concurrency.
   */
  parked(p: Prepared): void;
  /** Stops holding the delivery without sending it: it stays pending and is claimed again later. */
  giveBack(p: Prepared, waited: boolean): void;
  /** A rate-limited endpoint can take more: claim again. */
  wake(): void;
}

export interface PacerOptions {
  /**
   * How far ahead a delivery may wait in memory for its turn, so the next one is ready at the
   * moment its endpoint's pace allows it: longer than a claim read and an endpoint read take.
   */
  horizonMs(): number;
  /** The most deliveries of one endpoint waiting for their turn. */
  maxWaiting: number;
}

/** One rate-limited endpoint in the process that owns its shard. */
interface Lane {
  endpointId: string;
  shard: number;
  generation: number;
  /** When this process took the shard (Tenure.since). */
  since: number;
  limit: RateLimit;
  pace: Pace;
  /** Prepared deliveries waiting for their turn, in claim order. */
  waiting: Prepared[];
  timer: ReturnType<typeof setTimeout> | null;
}

const sameLimit = (a: RateLimit, b: RateLimit) => a.count === b.count && a.per === b.per;

/**
 * Stage 3b, pace (ADR 16): keeps rate-limited endpoints under their limit. Each such endpoint has a
 * pace (src/domain/rate-limit.ts) in the process that owns its shard. A prepared delivery goes at once
 * when its endpoint is unlimited or its turn has come; waits in memory when its turn is within the
 * horizon; otherwise goes back unsent (still pending, no attempt counted). A timer starts the next
 * waiting delivery at its turn and wakes the claim. A pace lives as long as its shard's tenure: after
 * a handover the new owner starts empty.
 */
export function pacer(deps: PacerDeps, options: PacerOptions) {
  const lanes = new Map<string, Lane>();
  let wakeTimer: ReturnType<typeof setTimeout> | null = null;
  let wakeAt = Number.POSITIVE_INFINITY;
  let stopped = false;

  const nowMs = () => deps.clock.now().getTime();

  function clearLane(lane: Lane) {
    if (lane.timer) clearTimeout(lane.timer);
    lane.timer = null;
    for (const p of lane.waiting.splice(0)) deps.giveBack(p, true);
  }

  /** The endpoint's lane under the current tenure and limit; null when the shard is not held. */
  function laneOf(endpointId: string, limit: RateLimit): Lane | null {
    const shard = shardOf(endpointId);
    const tenure = deps.tenure(shard);
    let lane = lanes.get(endpointId);
    if (lane && lane.generation !== tenure?.generation) {
      // The shard changed hands in between: what this process knew of the pace is no longer the truth.
      clearLane(lane);
      lanes.delete(endpointId);
      lane = undefined;
    }
    if (!tenure) return null;
    if (!lane) {
      lane = {
        endpointId,
        shard,
        generation: tenure.generation,
        since: tenure.since,
        limit,
        pace: startPace(limit, tenure.since),
        waiting: [],
        timer: null,
      };
      lanes.set(endpointId, lane);
    } else if (!sameLimit(lane.limit, limit)) {
      lane.limit = limit;
      lane.pace = repace(lane.pace, limit, lane.since);
    }
    return lane;
  }

  function startNow(lane: Lane, p: Prepared, at: number, waited: boolean) {
    paceStarted(lane.pace, at);
    deps.start(p, new Date(at), waited);
  }

  /** Turns the pace allows within the horizon, as far as the queue may hold them. */
  const turns = (lane: Lane, now: number) =>
    Math.min(turnsWithin(lane.pace, now, options.horizonMs()), options.maxWaiting);

  function arm(lane: Lane) {
    if (lane.timer || lane.waiting.length === 0 || stopped) return;
    lane.timer = setTimeout(() => turn(lane), Math.max(0, Math.ceil(nextStartAt(lane.pace) - nowMs())));
  }

  /** The lane's timer: starts its next waiting delivery once its turn has come. */
  function turn(lane: Lane) {
    lane.timer = null;
    if (lanes.get(lane.endpointId) !== lane) return;
    if (!deps.mayStart(lane.shard)) {
      clearLane(lane);
      return;
    }
    const now = nowMs();
    const next = lane.waiting[0];
    if (next && now >= nextStartAt(lane.pace)) {
      lane.waiting.shift();
      startNow(lane, next, now, true);
      deps.wake();
    }
    arm(lane);
  }

  function armWake(at: number) {
    if (stopped || at >= wakeAt) return;
    if (wakeTimer) clearTimeout(wakeTimer);
    wakeAt = at;
    wakeTimer = setTimeout(
      () => {
        wakeTimer = null;
        wakeAt = Number.POSITIVE_INFINITY;
        deps.wake();
      },
      Math.max(0, Math.ceil(at - nowMs())),
    );
  }

  return {
    /** Hands each prepared delivery on: sent now, waiting for its turn, or given back unsent. */
    admit(ready: readonly Prepared[]): void {
      const now = nowMs();
      for (const p of ready) {
        const limit = p.endpoint.rateLimit;
        if (limit === null) {
          // Checked at the start, not only at the claim: preparing it (reads) may have outlived the
          // shard's claim window, and a send started after it could outlast the lease (ADR 9).
          const mayStart = deps.mayStart(shardOf(p.delivery.webhookId));
          // The limit was removed: what waited for it goes now.
          const old = lanes.get(p.endpoint.id);
          if (old) {
            lanes.delete(p.endpoint.id);
            if (old.timer) clearTimeout(old.timer);
            for (const w of old.waiting.splice(0)) {
              if (mayStart) deps.start(w, new Date(now), true);
              else deps.giveBack(w, true);
            }
          }
          if (mayStart) deps.start(p, new Date(now), false);
          else deps.giveBack(p, false);
          continue;
        }
        const lane = laneOf(p.endpoint.id, limit);
        if (!lane || !deps.mayStart(lane.shard)) {
          deps.giveBack(p, false);
          continue;
        }
        if (lane.waiting.length === 0 && now >= nextStartAt(lane.pace)) {
          startNow(lane, p, now, false);
        } else if (turns(lane, now) > lane.waiting.length) {
          lane.waiting.push(p);
          deps.parked(p);
          arm(lane);
        } else {
          deps.giveBack(p, false);
        }
      }
    },

    /**
     * For the claim: how many more deliveries each known rate-limited endpoint can use within the
     * horizon (0: leave it out of the read). Arms a wake-up for when an endpoint with none waiting
     * gets room again. Lanes with nothing to remember any more are forgotten here.
     */
    rooms(): Map<string, number> {
      const now = nowMs();
      const rooms = new Map<string, number>();
      let earliest = Number.POSITIVE_INFINITY;
      for (const [id, lane] of lanes) {
        if (lane.waiting.length === 0 && paceIdle(lane.pace, now)) {
          // Nothing it remembers could hold an attempt back any more; a new lane allows no more than it.
          lanes.delete(id);
          continue;
        }
        const room = Math.max(0, turns(lane, now) - lane.waiting.length);
        rooms.set(id, room);
        if (room === 0 && lane.waiting.length === 0) {
          earliest = Math.min(earliest, nextStartAt(lane.pace) - options.horizonMs());
        }
      }
      if (earliest < Number.POSITIVE_INFINITY) armWake(earliest);
      return rooms;
    },

    /** Gives back what waits in the shard (it is being given away). */
    giveBackShard(shard: number): void {
      for (const [id, lane] of lanes) {
        if (lane.shard !== shard) continue;
        clearLane(lane);
        lanes.delete(id);
      }
    },

    /** How many deliveries wait for their turn. */
    get waiting(): number {
      let n = 0;
      for (const lane of lanes.values()) n += lane.waiting.length;
      return n;
    },

    /** Gives back everything waiting and stops every timer (the process stops). */
    stop(): void {
      stopped = true;
      if (wakeTimer) clearTimeout(wakeTimer);
      wakeTimer = null;
      for (const lane of lanes.values()) clearLane(lane);
      lanes.clear();
    },

    start(): void {
      stopped = false;
    },
  };
}

export type Pacer = ReturnType<typeof pacer>;
