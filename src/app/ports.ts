import type { Delivery, DeliveryStatus } from "../domain/delivery.ts";
import type { DisabledReason, Endpoint } from "../domain/endpoint.ts";
import type { EventType } from "../domain/event-catalog.ts";

/** The tenant and project a token belongs to; every read and write is confined to it. */
export interface Scope {
  tenantId: string;
  projectId: string;
}

/** Time, as a port, so retry timing is tested without sleeping. */
export interface Clock {
  now(): Date;
}

/** Randomness and identifiers, as a port. */
export interface Ids {
  uuid(): string;
  randomBytes(n: number): Uint8Array;
  /** A uniform number in [0, 1), for jitter. */
  random(): number;
}

/** Encrypts endpoint secrets at rest (AES-256-GCM in production). */
export interface SecretCipher {
  seal(plain: string): Promise<string>;
  open(sealed: string): Promise<string>;
}

/** Position in a newest-first list: the last item's creation time and id. */
export interface Cursor {
  createdAt: Date;
  id: string;
}

export interface PageRequest {
  limit: number;
  cursor: Cursor | null;
}

/** A page of a newest-first list; `next` is the cursor of the last item when more may follow. */
export interface Page<T> {
  data: T[];
  next: Cursor | null;
}

export interface EndpointFilter {
  enabled?: boolean | undefined;
  event?: EventType | undefined;
}

/** Fields of an endpoint a use case may change; absent fields stay as they are. */
export type EndpointPatch = Partial<
  Pick<Endpoint, "url" | "events" | "description" | "enabled" | "disabledReason" | "secrets" | "failingSince">
> & { updatedAt: Date };

export interface EndpointRepository {
  insert(endpoint: Endpoint): Promise<void>;
  get(scope: Scope, id: string): Promise<Endpoint | null>;
  /** Unscoped batch read for the dispatcher. */
  getMany(ids: readonly string[]): Promise<Endpoint[]>;
  list(scope: Scope, filter: EndpointFilter, page: PageRequest): Promise<Page<Endpoint>>;
  /** Every endpoint of the project subscribed to the type, enabled or not (fan-out). */
  listSubscribed(scope: Scope, type: EventType): Promise<Endpoint[]>;
  /** Applies the patch and returns the endpoint as it now is; null when absent. */
  update(scope: Scope, id: string, patch: EndpointPatch): Promise<Endpoint | null>;
  delete(scope: Scope, id: string): Promise<boolean>;
  /** Clears the failure streak of these endpoints (a success was seen). */
  markSucceeded(ids: readonly string[]): Promise<void>;
  /** Starts a failure streak at `at` on those of these endpoints that have none. */
  markFailing(ids: readonly string[], at: Date): Promise<void>;
  /** Enabled endpoints whose failure streak began at or before `before`. */
  listFailingSince(before: Date, limit: number): Promise<Endpoint[]>;
  /** Disables an enabled endpoint; false when it was already disabled or absent. */
  disable(id: string, reason: DisabledReason, at: Date): Promise<boolean>;
}

/** An accepted event: its envelope's exact bytes and the endpoints it is owed to. */
export interface StoredEvent {
  id: string;
  tenantId: string;
  projectId: string;
  type: EventType;
  /** The serialised envelope; every attempt sends exactly these bytes. */
  body: string;
  occurredAt: Date;
  createdAt: Date;
  /** Endpoints chosen at acceptance; fan-out creates one first delivery for each. */
  targets: string[];
  /** True until every target has its first delivery record. */
  fanoutPending: boolean;
}

export interface EventRepository {
  /** Inserts the event; false (and nothing written) when an event with that id exists already. */
  insert(event: StoredEvent): Promise<boolean>;
  get(scope: Scope, id: string): Promise<StoredEvent | null>;
  getMany(ids: readonly string[]): Promise<StoredEvent[]>;
  markFannedOut(ids: readonly string[]): Promise<void>;
  /** Events created at or before `before` whose fan-out has not been confirmed. */
  listFanoutPending(before: Date, limit: number): Promise<StoredEvent[]>;
  /** Events of the project created in [since, until), oldest first. */
  listCreatedBetween(
    scope: Scope,
    since: Date,
    until: Date,
    limit: number,
    after?: string,
  ): Promise<StoredEvent[]>;
  deleteCreatedBefore(before: Date): Promise<number>;
}

export interface DeliveryFilter {
  status?: DeliveryStatus | undefined;
  eventType?: EventType | undefined;
  eventId?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

/** A delivery claimed by one process until the lease expires. */
export interface LeasedDelivery extends Delivery {
  leaseOwner: string;
  leaseExpiresAt: Date;
  /** True when this claim took over a lease that had expired (its owner died), not a fresh or released one. */
  recovered?: boolean;
}

export interface ClaimRequest {
  now: Date;
  owner: string;
  leaseMs: number;
  limit: number;
  /** Endpoints this process has no room for right now (per-endpoint concurrency). */
  excludeWebhookIds: readonly string[];
  /**
   * Most deliveries this process may have in flight to one endpoint, and how many it has now: a claim
   * leases no more for an endpoint than it has room for, so nothing claimed has to wait or be given back.
   */
  perEndpointLimit?: number;
  busy?: Readonly<Record<string, number>>;
}

/** The recorded result of one attempt, and the attempt that follows it, if any. */
export interface AttemptResult {
  id: string;
  leaseOwner: string;
  status: Exclude<DeliveryStatus, "pending">;
  responseStatus: number | null;
  responseBody: string | null;
  error: Delivery["error"];
  durationMs: number | null;
  attemptedAt: Date | null;
  nextAttemptAt: Date | null;
  next: Delivery | null;
}

export interface DeliveryRepository {
  /** Inserts deliveries; a record whose id exists already is left as it is (safe to repeat). */
  insertMany(deliveries: readonly Delivery[]): Promise<void>;
  get(scope: Scope, id: string): Promise<Delivery | null>;
  list(scope: Scope, webhookId: string, filter: DeliveryFilter, page: PageRequest): Promise<Page<Delivery>>;
  /** The highest attempt number for each (event, endpoint) pair given; absent pairs are 0. */
  maxAttempts(pairs: readonly { eventId: string; webhookId: string }[]): Promise<Map<string, number>>;
  /** The latest delivery (highest attempt) of each given event to the endpoint; events with none are absent. */
  latestForEvents(webhookId: string, eventIds: readonly string[]): Promise<Map<string, Delivery>>;
  /** Cancels every pending delivery of the endpoint; returns how many. */
  cancelPending(webhookId: string, at: Date): Promise<number>;
  /** Atomically leases up to `limit` due pending deliveries (unleased or with an expired lease). */
  claimDue(request: ClaimRequest): Promise<LeasedDelivery[]>;
  /**
   * Records attempt results: first inserts each `next`, then finalises each current record, but only
   * while it is still pending and leased by the same owner. Safe to repeat after a crash.
   */
  complete(results: readonly AttemptResult[]): Promise<void>;
  /** Gives leased deliveries back (graceful stop). */
  release(owner: string, ids: readonly string[]): Promise<void>;
  /** How many pending deliveries are due at `now`, and when the oldest of them was due. */
  dueStats(now: Date): Promise<{ count: number; oldestScheduledAt: Date | null }>;
  /** The earliest scheduled_at of any pending delivery, for the dispatcher's next wake-up. */
  nextDueAt(): Promise<Date | null>;
  deleteCreatedBefore(before: Date): Promise<number>;
}

export interface TokenRecord {
  id: string;
  /** SHA-256 hex of the token; the token itself is never stored. */
  hash: string;
  /** The first characters of the token, to recognise it in a list. */
  prefix: string;
  tenantId: string;
  projectId: string;
  name: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface TokenRepository {
  insert(token: TokenRecord): Promise<void>;
  findByHash(hash: string): Promise<TokenRecord | null>;
  list(): Promise<TokenRecord[]>;
  /** Revokes by id; false when absent or already revoked. */
  revoke(id: string, at: Date): Promise<boolean>;
  count(): Promise<number>;
}

export interface IdempotencyRecord {
  scopeKey: string;
  eventId: string;
  fingerprint: string;
  createdAt: Date;
}

export interface IdempotencyRepository {
  /**
   * Stores the record unless one for the same scope key, newer than `notBefore`, exists;
   * returns the record that holds (the new one, or the earlier one).
   */
  reserve(record: IdempotencyRecord, notBefore: Date): Promise<IdempotencyRecord>;
  /** Deletes records created before `before`; returns how many. */
  deleteCreatedBefore(before: Date): Promise<number>;
}

/** The storage as a whole: the repositories, plus what the process needs to manage it. */
export interface Repositories {
  endpoints: EndpointRepository;
  events: EventRepository;
  deliveries: DeliveryRepository;
  tokens: TokenRepository;
  idempotency: IdempotencyRepository;
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

/** Wakes the local dispatcher at once (publish, manual retry). */
export interface DispatchSignal {
  notify(): void;
}

/** One signed POST of an event to an endpoint. */
export interface DeliveryRequest {
  url: string;
  /** The envelope exactly as serialised when the event was accepted; every attempt sends these bytes. */
  body: string;
  /** The event id, sent as X-Webhook-Id. */
  eventId: string;
  /** Plain endpoint secrets, newest first; two during a rotation grace period (one signature each). */
  secrets: string[];
  /** Unix seconds, sent as X-Webhook-Timestamp and signed. */
  timestamp: number;
}

/**
 * Sends deliveries over HTTP (undici on Node, fetch on Bun and Deno). Never throws for a failed
 * attempt: it reports the failure in the outcome.
 */
export interface Sender {
  send(request: DeliveryRequest): Promise<import("../domain/delivery.ts").SendOutcome>;
  /** Stops accepting work and releases pooled connections. */
  close(): Promise<void>;
}

/** What the delivery engine reports for /metrics. */
export interface DeliveryMetrics {
  attempt(outcome: { status: string; error: string | null; durationMs: number | null }): void;
  leaseRecovered(count: number): void;
  endpointDisabled(reason: string): void;
  publishToAttempt(ms: number): void;
}
