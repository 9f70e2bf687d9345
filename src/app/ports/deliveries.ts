// Storage of delivery records and their leases.
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
