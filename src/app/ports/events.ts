// Storage of accepted events.
import type { Delivery } from "../../domain/delivery.ts";
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
  /**
   * The envelope's resource_id, lowercased, for erasure (ADR 15); null on an event stored before
   * Herald kept it (filled in by the subject backfill).
   */
  resourceId: string | null;
  /** A keyed hash of the envelope's data.recipient (SubjectKeys), for erasure; null when it has none. */
  recipientKey: string | null;
  /** Its place in acceptance order (accept time in µs, unique in the accepting process); see Delivery. */
  sequence: number;
  /**
   * The W3C traceparent of the publish's fan-out span, the parent of every attempt's span (ADR 24); absent
   * or null when the publish was not traced (tracing off, or an event stored before Herald kept it).
   */
  traceparent?: string | null;
}

/** The stored subject of events an erasure looks for: one of the two matching fields. */
export type SubjectMatch = { resourceId: string } | { recipientKey: string };

/** The subject fields of one event, written by the backfill. */
export interface EventSubjects {
  id: string;
  resourceId: string;
  recipientKey: string | null;
}

/** What fan-out reports for /metrics. */
export interface FanOutMetrics {
  /** Subscribed endpoints an event of this type was not fanned out to, because their filter did not match. */
  eventsFiltered(type: EventType, endpoints: number): void;
}

export interface EventRepository {
  /** Inserts the event; false (and nothing written) when an event with that id exists already. */
  insert(event: StoredEvent): Promise<boolean>;
  /**
   * Where the store has transactions: inserts the event and its first deliveries at once, all or nothing;
   * false (and nothing written) when an event with that id exists already. A store without it gets the
   * deliveries written first and the event second (ADR 2), with the crash window that order covers.
   */
  insertWithDeliveries?(event: StoredEvent, deliveries: readonly Delivery[]): Promise<boolean>;
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
  /** Deletes events created before `before` (of one project only, when given); returns how many. */
  deleteCreatedBefore(before: Date, scope?: Scope): Promise<number>;
  /** Ids of at most `limit` events of the project with this subject, found by index (no scan). */
  idsAbout(scope: Scope, subject: SubjectMatch, limit: number): Promise<string[]>;
  /** Deletes these events of the project; returns how many existed. */
  deleteMany(scope: Scope, ids: readonly string[]): Promise<number>;
  /** At most `limit` events stored without their subject fields (before Herald kept them), any project. */
  listWithoutSubjects(limit: number): Promise<StoredEvent[]>;
  /** Writes the subject fields of these events. */
  setSubjects(subjects: readonly EventSubjects[]): Promise<void>;
}
