import type { Endpoint } from "../../domain/endpoint.ts";
import type { OperationalNotice } from "../../domain/operational.ts";
import type { BrokerSenders } from "../destinations.ts";
import type { Logger } from "../logger.ts";
import type { AcceptedWork, DeliveryMetrics, Sender, StoredWork } from "../ports/sending.ts";
import type { Repositories } from "../ports/store.ts";
import type { Clock, Ids, SecretCipher } from "../ports/system.ts";
import type { Tracing } from "../ports/tracing.ts";
import type { RecordingBacklog } from "./record.ts";

// What the engine is given (its options and dependencies) and what it offers (the Dispatcher).

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
  /** The longest a result waits to be written with others at a steady rate (record-delay.ts; default 100 ms). */
  flushBatchMs?: number;
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
  /** The broker senders (ADR 27); absent: none, a send to a broker endpoint fails as connection_error. */
  brokers?: BrokerSenders;
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
   * Claims due work soon, reading the database (a publish, a manual retry). A publish in this process
   * hands over what it stored: the event is kept for its first attempts, and its first deliveries of
   * the shards this process owns are queued as they are, with the endpoints the publish read, so they
   * are sent without a due read or an endpoints read. Only the rest (FIFO endpoints, other owners'
   * shards, what the queue has no room for) is read from the database (ADR 9). Work stored otherwise
   * for endpoints of other processes' shards is announced to their owners where the store can.
   */
  wake(work?: AcceptedWork | StoredWork): void;
  /**
   * The schedule's safety net, once a second: claims from the queue, and reads the database only when
   * work may have come due that nothing announced (scheduled-read.ts, ADR 30).
   */
  tick(): void;
  /** Stops claiming, waits up to `graceMs` for in-flight sends, records them, gives every shard back. */
  stop(graceMs: number): Promise<void>;
  /**
   * Gives up this process's shards, heartbeat and proof of life at once, without waiting for sends in
   * flight (they are sent again by the shards' next owners): for a process about to exit now.
   */
  giveUp(): Promise<void>;
  /** Resolves once shards are taken, nothing is in flight and nothing is waiting to be written. */
  idle(): Promise<void>;
  /** How far behind recording results is (/readyz, /metrics). */
  recording(): RecordingBacklog;
  readonly inFlight: number;
}
