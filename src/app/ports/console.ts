// Storage for the browser console and the customer portal: sessions, one-time codes, portal links,
// and the read-only delivery aggregations the pages show.
import type { Delivery, DeliveryStatus } from "../../domain/delivery.ts";
import type { DeliveryFilter } from "./deliveries.ts";
import type { Page, PageRequest, Scope } from "./paging.ts";

/**
 * What a record stands for:
 * - `console`: a signed-in browser (cookie), full project access;
 * - `sign_in_code`: a one-time code printed by `herald console`, redeemed once for a `console` session;
 * - `portal_link`: a customer portal link made by POST /api/v1/portal-sessions (revocable by id);
 * - `portal`: a browser that opened a portal link (cookie), restricted; it dies with its link.
 */
export type ConsoleSessionKind = "console" | "sign_in_code" | "portal_link" | "portal";

export interface ConsoleSessionRecord {
  id: string;
  /** SHA-256 hex of the secret handed out (cookie value, code, link); the secret itself is never stored. */
  hash: string;
  kind: ConsoleSessionKind;
  tenantId: string;
  projectId: string;
  /** Portal only: the endpoints it may reach; null means every endpoint of the project. */
  webhookIds: string[] | null;
  /** The synchronizer token every form of this session carries (not a credential on its own). */
  csrfToken: string;
  /** A portal browser session: the portal link it came from. */
  parentId: string | null;
  createdAt: Date;
  expiresAt: Date;
  /** Set once a single-use code has been redeemed. */
  usedAt: Date | null;
  revokedAt: Date | null;
}

export interface ConsoleSessionRepository {
  insert(record: ConsoleSessionRecord): Promise<void>;
  findByHash(hash: string): Promise<ConsoleSessionRecord | null>;
  get(id: string): Promise<ConsoleSessionRecord | null>;
  /**
   * Marks an unused, unrevoked record used at `at` and returns it; null for every later caller (and
   * for an unknown hash). Atomic: two concurrent redemptions of one code cannot both succeed.
   */
  consume(hash: string, at: Date): Promise<ConsoleSessionRecord | null>;
  /** Revokes a record of the scope and kind; false when absent, foreign or already revoked. */
  revoke(scope: Scope, kind: ConsoleSessionKind, id: string, at: Date): Promise<boolean>;
  /** Deletes records that expired before `before`; returns how many. */
  deleteExpiredBefore(before: Date): Promise<number>;
}

/** One finished attempt, reduced to what health and charts need. */
export interface AttemptSummary {
  webhookId: string;
  status: DeliveryStatus;
  attemptedAt: Date;
}

/** Read-only queries across the deliveries of a project, for the console's pages. */
export interface DeliveryInsights {
  /** Attempts made at or after `since` (attempted_at set), newest first, at most `limit`. */
  attemptsSince(scope: Scope, since: Date, limit: number): Promise<AttemptSummary[]>;
  /** The latest successful attempt of each endpoint given; endpoints without one are absent. */
  lastSuccess(scope: Scope, webhookIds: readonly string[]): Promise<Map<string, Date>>;
  /**
   * Deliveries of the project, newest first (created_at, id), optionally of some endpoints only, with
   * the same filters as one endpoint's list.
   */
  list(
    scope: Scope,
    webhookIds: readonly string[] | null,
    filter: DeliveryFilter,
    page: PageRequest,
  ): Promise<Page<Delivery>>;
  /** Deliveries created or attempted at or after `since`, oldest change first, at most `limit` (live view). */
  changedSince(scope: Scope, since: Date, limit: number): Promise<Delivery[]>;
  /** Pending deliveries of the project (or of some of its endpoints) due at `now`, and the oldest one's scheduled time. */
  dueStats(
    scope: Scope,
    now: Date,
    webhookIds?: readonly string[] | null,
  ): Promise<{ count: number; oldestScheduledAt: Date | null }>;
}
