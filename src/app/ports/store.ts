// The store as a whole.
import type { Delivery } from "../../domain/delivery.ts";
import type { DeliveryRepository } from "./deliveries.ts";
import type { EndpointRepository } from "./endpoints.ts";
import type { ErasureRepository, SettingsRepository } from "./erasures.ts";
import type { EventRepository, StoredEvent } from "./events.ts";
import type { ShardRepository } from "./shards.ts";
import type { IdempotencyRepository, TokenRepository } from "./tokens.ts";

/** The storage as a whole: the repositories, plus what the process needs to manage it. */
export interface Repositories {
  endpoints: EndpointRepository;
  events: EventRepository;
  deliveries: DeliveryRepository;
  shards: ShardRepository;
  tokens: TokenRepository;
  idempotency: IdempotencyRepository;
  erasures: ErasureRepository;
  settings: SettingsRepository;
  /**
   * Tells the processes sharing the database which endpoints just got due work (ADR 18, "Due work across
   * processes"); absent where the store has no such channel (MongoDB, memory), and the owners then find
   * that work by their own reads.
   */
  due?: DueSignals;
  /** Resolves when the store answers; rejects when it does not. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Announcements of stored due work, by endpoint, heard by every process on the same database. Best
 * effort: an announcement lost (a connection dropped, a process starting) delays that work to its owner's
 * next read (at most the one-second schedule), and never loses it.
 */
export interface DueSignals {
  /**
   * Whether announcements are known to get through now (the channel answered its last check). While
   * not, the engine reads for that work itself, as without signals.
   */
  readonly live: boolean;
  /**
   * Announces due work stored for these endpoints. Returns at once and never throws. `work`, when given,
   * is what a publish just stored for them (its event and those endpoints' first deliveries): a store
   * that can carries it to the listeners, so an owner can queue it as it is instead of reading for it.
   */
  announce(endpointIds: readonly string[], work?: HandedWork): void;
  /**
   * Calls `heard` with the endpoints of each announcement (this process's own included) until stopped,
   * and with the work it carried when it carried some (null otherwise: read for it).
   */
  listen(heard: (endpointIds: readonly string[], work: HandedWork | null) => void): () => void;
}

/** A publish's event and first deliveries, carried to the processes that own their shards. */
export interface HandedWork {
  event: StoredEvent;
  /** First attempts of `event` (attempt 1, automatic, pending), each of an announced endpoint. */
  deliveries: readonly Delivery[];
}

/** Thrown by adapters when the store cannot be reached; the edge answers 503. */
export class StoreUnavailableError extends Error {
  constructor(message = "the database is unreachable", options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}
