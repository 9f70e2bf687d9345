// Storage of accepted events.
import type { EventType } from "../../domain/event-catalog.ts";
import type { Scope } from "./paging.ts";

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
  /** Its place in acceptance order (accept time in µs, unique in the accepting process); see Delivery. */
  sequence: number;
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
