// Storage of endpoints.
import type { DisabledReason, Endpoint } from "../../domain/endpoint.ts";
import type { EventType } from "../../domain/event-catalog.ts";
import type { Page, PageRequest, Scope } from "./paging.ts";

export interface EndpointFilter {
  enabled?: boolean | undefined;
  event?: EventType | undefined;
}

/** Fields of an endpoint a use case may change; absent fields stay as they are. */
export type EndpointPatch = Partial<
  Pick<
    Endpoint,
    | "url"
    | "events"
    | "description"
    | "enabled"
    | "disabledReason"
    | "secrets"
    | "failingSince"
    | "disabledAt"
    | "disabledNotice"
    | "headers"
    | "signatureScheme"
    | "filter"
    | "rateLimit"
    | "ordering"
    | "clientCertificate"
    | "destination"
  >
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
  /** Starts a failure streak at `at` on those of these endpoints that have none; the new streak is unreported. */
  markFailing(ids: readonly string[], at: Date): Promise<void>;
  /** Enabled endpoints whose failure streak began at or before `before`, the oldest streak first. */
  listFailingSince(before: Date, limit: number): Promise<Endpoint[]>;
  /**
   * Disables an enabled endpoint (`disabledAt = at`, not reported yet); false when it was already disabled
   * or absent.
   */
  disable(id: string, reason: DisabledReason, at: Date): Promise<boolean>;
  /**
   * Occurrences whose operational event is still owed (ADR 20), any scope, at most `limit`: "failing",
   * enabled endpoints whose streak began at or before `before` and is unreported (`failingNotice` null);
   * "disabled", disabled endpoints with `disabledAt` at or before `before` and `disabledNotice` null.
   * The oldest occurrence first, so a backlog longer than `limit` is reported in the order it happened.
   */
  listUnreported(kind: "failing" | "disabled", before: Date, limit: number): Promise<Endpoint[]>;
  /**
   * Records that the operational event of an occurrence was published: sets `failingNotice` (or
   * `disabledNotice`) to `at` where the endpoint's `failingSince` (or `disabledAt`) still equals `at`.
   * Every writer writes the same value, so it needs no atomicity; answers whether it matched.
   */
  markReported(id: string, kind: "failing" | "disabled", at: Date): Promise<boolean>;
  /** The ids of every endpoint with ordering "fifo", in any scope (the engine, metrics). */
  listFifo(): Promise<string[]>;
}
