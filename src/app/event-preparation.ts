import { sha256Hex } from "../domain/encoding.ts";
import type { Endpoint } from "../domain/endpoint.ts";
import { buildEnvelope, type Envelope, newEventId } from "../domain/envelope.ts";
import { DomainError, invalid } from "../domain/errors.ts";
import { type EventType, isOperationalType } from "../domain/event-catalog.ts";
import type { Clause, EventFilter } from "../domain/event-filter.ts";
import { compileFilter } from "../domain/event-filter-compile.ts";
import { clauseMatches } from "../domain/event-filter-match.ts";
import type { AppDeps } from "./deps.ts";
import type { EventAcceptance } from "./event-acceptance.ts";
import type { StoredEvent } from "./ports/events.ts";
import type { Scope } from "./ports/paging.ts";

export interface PublishInput {
  type: string;
  data: unknown;
  resourceId?: string | undefined;
  occurredAt?: string | undefined;
  idempotencyKey?: string | undefined;
  /** The publisher's W3C `traceparent` header: the publish's span continues that trace (ADR 24). */
  traceparent?: string | undefined;
  /**
   * Set only by Herald's own operational notices (ADR 20), never from a request: the type may be an
   * operational one, the endpoint the event is about is never one of its targets, and the key's
   * fingerprint is the occurrence's, so a retry whose data changed (the endpoint's URL was edited
   * meanwhile) still finds the first publish.
   */
  operational?: { aboutEndpoint: string; fingerprint: string } | undefined;
}

export interface PublishResult {
  envelope: Envelope;
  /** How many endpoints the event was fanned out to. */
  endpoints: number;
  /** True when an earlier request with the same Idempotency-Key produced this answer. */
  replayed: boolean;
}

/** What a publish has decided before it writes: a replay of an earlier answer, or a new event and its targets. */
export type Prepared =
  | { kind: "replay"; result: PublishResult }
  | { kind: "new"; envelope: Envelope; targets: Endpoint[]; subscribed: number };

/** How long an Idempotency-Key holds its first answer. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

/** An Idempotency-Key as stored: keys are the project's own. */
export const keyInScope = (scope: Scope, key: string) => `${scope.tenantId}/${scope.projectId}/${key}`;

/** A repeated publish finishes an unfinished fan-out only once the event is this old. */
export const REPLAY_FINISHES_AFTER_MS = 2_000;

/** Parses the stored envelope back (it was serialised by Herald, so it is trusted). */
export function envelopeOf(event: StoredEvent): Envelope {
  return JSON.parse(event.body) as Envelope;
}

/** Compiled filters by their JSON, so a publish compiles an endpoint's filter only when it changed. */
function filterCache(limit = 1_000) {
  const compiled = new Map<string, Clause | null>();
  return (filter: EventFilter): Clause | null => {
    const key = JSON.stringify(filter);
    let clause = compiled.get(key);
    if (clause === undefined) {
      const r = compileFilter(filter);
      // A stored filter was valid when it was set; one that no longer compiles (limits changed since)
      // passes everything rather than silently dropping events (ADR 14).
      clause = r.ok ? r.clause : null;
      if (compiled.size >= limit) compiled.clear();
      compiled.set(key, clause);
    }
    return clause;
  };
}

/**
 * What a publish decides before it writes: the Idempotency-Key's reservation (an earlier answer is
 * replayed), the envelope, and the endpoints the event is owed to (their filters matched here, once).
 */
export function publishPreparation(deps: AppDeps, fanOut: EventAcceptance["fanOut"]) {
  const { repos, ids, signal } = deps;
  const clauseOf = filterCache();

  /** The endpoints whose filter the event matches (evaluated once per event and endpoint, here). */
  const wanting = (endpoints: readonly Endpoint[], envelope: Envelope): Endpoint[] =>
    endpoints.filter((e) => {
      if (e.filter === null) return true;
      const clause = clauseOf(e.filter);
      return clause === null || clauseMatches(clause, envelope);
    });

  /**
   * The first answer again. If the first request died between storing the event and its deliveries,
   * the repeat finishes the fan-out now (safe to repeat) rather than leaving it to the maintenance job.
   */
  async function replay(earlier: StoredEvent, now: Date): Promise<PublishResult> {
    // Younger than that, the flag may only be waiting for its batched write, not for a dead process.
    if (earlier.fanoutPending && now.getTime() - earlier.createdAt.getTime() >= REPLAY_FINISHES_AFTER_MS) {
      await fanOut(earlier, now);
      signal.notify({ endpointIds: earlier.targets });
    }
    return { envelope: envelopeOf(earlier), endpoints: earlier.targets.length, replayed: true };
  }

  /**
   * Everything a publish decides before it writes: the Idempotency-Key's reservation (an earlier
   * answer is replayed), the envelope, and the endpoints it is owed to.
   */
  async function prepare(
    scope: Scope,
    input: PublishInput,
    now: Date,
    subscribers: (type: EventType) => Promise<Endpoint[]> = (type) =>
      repos.endpoints.listSubscribed(scope, type),
  ): Promise<Prepared> {
    let eventId = newEventId(ids.randomBytes(16));
    if (input.operational === undefined && isOperationalType(input.type)) {
      throw invalid([
        {
          path: "type",
          message: `is an operational event type: "${input.type}" is emitted by Herald itself and cannot be published`,
        },
      ]);
    }

    if (input.idempotencyKey !== undefined) {
      const fingerprint =
        input.operational?.fingerprint ??
        (await sha256Hex(
          JSON.stringify([input.type, input.data, input.resourceId ?? null, input.occurredAt ?? null]),
        ));
      const held = await repos.idempotency.reserve(
        {
          scopeKey: keyInScope(scope, input.idempotencyKey),
          eventId,
          fingerprint,
          createdAt: now,
        },
        new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS),
      );
      if (held.fingerprint !== fingerprint) {
        throw new DomainError(
          "conflict",
          "This Idempotency-Key was already used with a different request body in the last 24 hours.",
        );
      }
      if (held.eventId !== eventId) {
        const earlier = await repos.events.get(scope, held.eventId);
        if (earlier) return { kind: "replay", result: await replay(earlier, now) };
        // The first request has not stored its event (still running, or it crashed): finish it under the same id.
        eventId = held.eventId;
      }
    }

    let occurredAt = now;
    if (input.occurredAt !== undefined) {
      occurredAt = new Date(input.occurredAt);
      if (Number.isNaN(occurredAt.getTime())) {
        throw invalid([{ path: "occurred_at", message: "must be an ISO 8601 timestamp" }]);
      }
    }
    const envelope = buildEnvelope({
      id: eventId,
      type: input.type,
      data: input.data,
      tenantId: scope.tenantId,
      projectId: scope.projectId,
      occurredAt,
      resourceId: input.resourceId,
    });
    const about = input.operational?.aboutEndpoint;
    // An operational event is never delivered to the endpoint it is about (ADR 20, loops).
    const subscribed = (await subscribers(envelope.type)).filter((e) => e.id !== about);
    // The targets are decided here, once, and stored on the event: a fan-out finished later (replay,
    // maintenance) creates exactly these, whatever the filters are by then.
    const targets = wanting(subscribed, envelope);
    return { kind: "new", envelope, targets, subscribed: subscribed.length };
  }

  return { prepare, replay };
}
