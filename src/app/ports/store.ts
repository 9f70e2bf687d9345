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
 * next read (a read at once when the channel listens again; at most 5 s apart otherwise, ADR 30), and
 * never loses it.
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
   * and with the work it carried when it carried some (null otherwise: read for it). Calls `listening`
   * each time the channel starts listening, the first time and again after a lost connection: what was
   * announced before may never be heard, and is to be read for.
   */
  listen(
    heard: (endpointIds: readonly string[], work: HandedWork | null) => void,
    listening?: () => void,
  ): () => void;
  /**
   * Resolves once every announcement committed before this call has been passed to `heard`, or was lost
   * with the listening connection (PostgreSQL delivers notifications in commit order, so the store sends
   * a marker after the call and resolves when the listener hears it). Never rejects; may never resolve
   * while the channel is down. Offered by a store whose announcements carry work.
   */
  barrier?(): Promise<void>;
  /**
   * Which endpoints' first deliveries a publish through this process carries to their owners in its own
   * write (those of shards this process does not hold), instead of an announcement after it; null stops.
   * The work so carried needs no `announce`: one made for it anyway sends nothing for what was carried.
   */
  carry?(theirs: ((webhookId: string) => boolean) | null): void;
}

/** A publish's event and first deliveries, carried to the processes that own their shards. */
export interface HandedWork {
  event: StoredEvent;
  /** First attempts of `event` (attempt 1, automatic, pending), each of an announced endpoint. */
  deliveries: readonly Delivery[];
}

/**
 * What a failed store operation was, as the store's own error classification tells it (ADR 10): the
 * connection was lost (`unreachable`), the server took longer than the time limit (`timeout`), it was
 * momentarily contended (`busy`: locks, no free connection slot), it refused the statement for what it
 * is (`refused`), or the request was too large for it (`too-large`). Only `unreachable` is an outage.
 */
export type StoreFailureKind = "unreachable" | "timeout" | "busy" | "refused" | "too-large";

const UNAVAILABLE_MESSAGES = {
  unreachable: "the database is unreachable",
  timeout: "the database did not answer in time",
  busy: "the database is busy",
} as const;

/**
 * Thrown by adapters when the store cannot serve now (lost, slow or contended); the edge answers 503.
 * `answer` is the server's or driver's own wording, secrets taken out, for the logs.
 */
export class StoreUnavailableError extends Error {
  readonly kind: "unreachable" | "timeout" | "busy";
  readonly answer: string | null;
  constructor(
    message?: string,
    options?: { cause?: unknown; kind?: "unreachable" | "timeout" | "busy"; answer?: string | null },
  ) {
    const kind = options?.kind ?? "unreachable";
    super(message ?? UNAVAILABLE_MESSAGES[kind], options);
    this.name = "StoreUnavailableError";
    this.kind = kind;
    this.answer = options?.answer ?? null;
  }
}

/** A store failure as the logs and metrics tell it: its kind and the server's own answer. */
export interface StoreFailure {
  kind: StoreFailureKind | "other";
  answer: string;
}

const FAILURE = Symbol.for("herald.storeFailure");

/**
 * Marks an error the server answered about the request itself (refused, too large) with its kind, and
 * hands it back unchanged otherwise: callers still see the driver's own error (a 500 at the edge).
 */
export function withFailure<E>(e: E, failure: StoreFailure): E {
  if (typeof e === "object" && e !== null && Object.isExtensible(e))
    Object.defineProperty(e, FAILURE, { value: failure, enumerable: false, configurable: true });
  return e;
}

/** What a store operation's error was; `other` for one no store classified (a bug in Herald, most likely). */
export function storeFailureOf(e: unknown): StoreFailure {
  if (e instanceof StoreUnavailableError) return { kind: e.kind, answer: e.answer ?? answerOf(e.cause) };
  const tagged =
    typeof e === "object" && e !== null ? (e as { [FAILURE]?: StoreFailure })[FAILURE] : undefined;
  return tagged ?? { kind: "other", answer: answerOf(e) };
}

const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi;

/** An error's own message, at most 300 characters, with any credentials of a URL in it taken out. */
export function answerOf(e: unknown): string {
  const text = e instanceof Error ? e.message : e === undefined ? "" : String(e);
  return text.replace(USERINFO, "$1[redacted]@").slice(0, 300);
}
