// Storage of delivery records.
import type { Delivery, DeliveryStatus } from "../../domain/delivery.ts";
import type { EventType } from "../../domain/event-catalog.ts";
import type { Page, PageRequest, Scope } from "./paging.ts";

export interface DeliveryFilter {
  status?: DeliveryStatus | undefined;
  eventType?: EventType | undefined;
  eventId?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

/**
 * A read of due work in the shards a process owns. Nothing is written: inside its shards the owner is
 * the only claimer (ADR 9), so what it holds is kept in its memory, not stamped on the records.
 */
export interface DueRequest {
  now: Date;
  /** The shards to read; null for every shard (the process owns them all). */
  shards: readonly number[] | null;
  /** Most records answered. */
  limit: number;
  /** Endpoints with no room left (their in-flight cap is reached): their records are not read. */
  excludeWebhookIds: readonly string[];
  /** Deliveries the process holds already (in flight, or sent and waiting for their record). */
  excludeIds: readonly string[];
  /** More than this many of one endpoint are of no use to the caller (its room); a store may stop there. */
  perEndpointLimit?: number;
  /**
   * Also answer `next` (DueAnswer): when the earliest pending delivery of these shards scheduled after
   * `now` and no later than this comes due. Bounded, so the answer costs a look at what comes due soon,
   * never at the whole backlog of later retries (ADR 30, "The scheduled read waits").
   */
  until?: Date;
}

/**
 * Due deliveries, earliest scheduled first; with `next` when the request gave `until` and the store
 * answers it in the same read: the earliest `scheduledAt` in (now, until] of a pending delivery of the
 * shards (any endpoint, held or not), or null when none. A store answers it only where work that other
 * processes store reaches the owner without a read (its due signals, or no other process sharing it):
 * the engine then skips its scheduled reads until then (MongoDB does not; ADR 30).
 */
export type DueAnswer = Delivery[] & { next?: Date | null };

/** The recorded result of one attempt, and the attempt that follows it, if any. */
export interface AttemptResult {
  id: string;
  status: Exclude<DeliveryStatus, "pending">;
  responseStatus: number | null;
  responseBody: string | null;
  error: Delivery["error"];
  durationMs: number | null;
  attemptedAt: Date | null;
  nextAttemptAt: Date | null;
  next: Delivery | null;
  /**
   * The scheme and custom header names (never values) in force for the send, kept on the record so the
   * console shows the request as it was sent; absent or null for a result without a send.
   */
  signatureScheme?: Delivery["signatureScheme"] | undefined;
  headerNames?: Delivery["headerNames"] | undefined;
  /** What the broker answered for a stored message (ADR 27); absent or null for none. */
  receipt?: Delivery["receipt"] | undefined;
  /**
   * Set on a success that ends its (event, endpoint) pair's automatic attempts (ADR 19): `record` cancels
   * the pair's other pending automatic attempts with `error: "superseded"`. Absent or null otherwise.
   */
  acknowledges?: { eventId: string; webhookId: string } | null | undefined;
  /**
   * Set on a result whose pair was acknowledged while this attempt was in flight: its record may have been
   * cancelled as superseded meanwhile, and takes this outcome all the same (the send happened).
   */
  acknowledgedInFlight?: boolean | undefined;
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
  cancelPending(scope: Scope, webhookId: string): Promise<number>;
  /** Due pending deliveries of the given shards, earliest scheduled first (one read, no write). */
  due(request: DueRequest): Promise<DueAnswer>;
  /** Moves pending deliveries' scheduled time to `until`; records no longer pending are left as they are. */
  postpone(ids: readonly string[], until: Date): Promise<void>;
  /**
   * The endpoint's earliest pending delivery in acceptance order (sequence, then event id), due or
   * not: the head of an endpoint with ordering "fifo" (ADR 16). Null when nothing is pending.
   */
  head(webhookId: string): Promise<Delivery | null>;
  /** How many deliveries of each endpoint are pending. */
  countPending(webhookIds: readonly string[]): Promise<Map<string, number>>;
  /**
   * Records attempt results in batched writes: first inserts each `next` (an existing id is left as it
   * is), then finalises each current record that is still pending (or, for a result
   * `acknowledgedInFlight`, cancelled as superseded: the send happened), then cancels the pending automatic attempts of each
   * pair a result `acknowledges`, other than this batch's own, with `error: "superseded"` (ADR 19). Safe
   * to repeat after a crash.
   */
  record(results: readonly AttemptResult[]): Promise<void>;
  /** How many pending deliveries are due at `now`, and when the oldest of them was due. */
  dueStats(now: Date): Promise<{ count: number; oldestScheduledAt: Date | null }>;
  /** Deletes finished records created before `before` (of one project only, when given); returns how many. */
  deleteCreatedBefore(before: Date, scope?: Scope): Promise<number>;
  /**
   * Erases the records of these events of the project (ADR 15): each pending one is cancelled, each one
   * not erased yet loses its response body and gets `erasedAt = at`; outcomes stay. Answers how many
   * records were erased now, and how many of them were pending.
   */
  erase(scope: Scope, eventIds: readonly string[], at: Date): Promise<{ erased: number; cancelled: number }>;
}
