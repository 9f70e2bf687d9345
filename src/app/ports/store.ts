// The store as a whole.
import type { DeliveryRepository } from "./deliveries.ts";
import type { EndpointRepository } from "./endpoints.ts";
import type { ErasureRepository, SettingsRepository } from "./erasures.ts";
import type { EventRepository } from "./events.ts";
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
  /** Resolves when the store answers; rejects when it does not. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Thrown by adapters when the store cannot be reached; the edge answers 503. */
export class StoreUnavailableError extends Error {
  constructor(message = "the database is unreachable", options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}
