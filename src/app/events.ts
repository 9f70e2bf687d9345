import type { Delivery } from "../domain/delivery.ts";
import { sha256Hex } from "../domain/encoding.ts";
import type { Endpoint } from "../domain/endpoint.ts";
import { buildEnvelope, type Envelope, newEventId, serializeEnvelope } from "../domain/envelope.ts";
import { subjectsOf } from "../domain/erasure.ts";
import { DomainError, invalid, notFound } from "../domain/errors.ts";
import { type EventType, isOperationalType } from "../domain/event-catalog.ts";
import { type Clause, compileFilter, type EventFilter } from "../domain/event-filter.ts";
import { clauseMatches } from "../domain/event-filter-match.ts";
import { firstDeliveryId } from "../domain/ids.ts";
import type { AppDeps } from "./deps.ts";
import type { FanOutMetrics, StoredEvent } from "./ports/events.ts";
import type { Scope } from "./ports/paging.ts";
import type { FanOutSpan, PublishSpan } from "./ports/tracing.ts";

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

/** One event's outcome in a batch: its result, or the error that event alone met. */
export type PublishOutcome = { ok: PublishResult } | { error: unknown };

/** Most events one batch publish may hold. */
export const MAX_BATCH_EVENTS = 100;

/** What a publish has decided before it writes: a replay of an earlier answer, or a new event and its targets. */
type Prepared =
  | { kind: "replay"; result: PublishResult }
  | { kind: "new"; envelope: Envelope; targets: Endpoint[]; subscribed: number };

export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

/** An Idempotency-Key as stored: keys are the project's own. */
const keyInScope = (scope: Scope, key: string) => `${scope.tenantId}/${scope.projectId}/${key}`;

/** A repeated publish finishes an unfinished fan-out only once the event is this old. */
export const REPLAY_FINISHES_AFTER_MS = 2_000;
/**
 * How long a fan-out may be in progress before the maintenance job finishes it. Only events stored
 * with `fanoutPending` (by versions that wrote the event before its deliveries) can need it.
 */
export const FANOUT_GRACE_MS = 30_000;

/** The first delivery of an event to each of its target endpoints; a disabled endpoint gets a skipped record. */
/**
 * Acceptance order for one process: the accept time in microseconds, made strictly increasing, so
 * events this process accepts one after the other are ordered even within one millisecond (ADR 16).
 */
export function sequencer(): (now: Date) => number {
  let last = 0;
  return (now) => {
    last = Math.max(last + 1, now.getTime() * 1000);
    return last;
  };
}

export async function firstDeliveries(
  event: StoredEvent,
  endpoints: readonly Endpoint[],
  now: Date,
): Promise<Delivery[]> {
  return endpoints.map(
    (e): Delivery => ({
      id: firstDeliveryId(event.id, e.id),
      tenantId: event.tenantId,
      projectId: event.projectId,
      webhookId: e.id,
      eventId: event.id,
      eventType: event.type,
      attempt: 1,
      trigger: "automatic",
      status: e.enabled ? "pending" : "skipped",
      url: e.url,
      responseStatus: null,
      responseBody: null,
      error: null,
      durationMs: null,
      scheduledAt: now,
      attemptedAt: null,
      nextAttemptAt: null,
      createdAt: now,
      erasedAt: null,
      sequence: event.sequence,
      signatureScheme: null,
      headerNames: null,
    }),
  );
}

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

/** Accepting events from the publisher and fanning them out to subscribed endpoints. */
export function eventUseCases(deps: AppDeps, metrics: FanOutMetrics) {
  const { repos, clock, ids, signal, subjects } = deps;
  const tracing = deps.tracing ?? null;
  const clauseOf = filterCache();

  /** The endpoints whose filter the event matches (evaluated once per event and endpoint, here). */
  const wanting = (endpoints: readonly Endpoint[], envelope: Envelope): Endpoint[] =>
    endpoints.filter((e) => {
      if (e.filter === null) return true;
      const clause = clauseOf(e.filter);
      return clause === null || clauseMatches(clause, envelope);
    });
  const nextSequence = sequencer();

  async function fanOut(event: StoredEvent, now: Date): Promise<void> {
    if (event.targets.length === 0) return;
    const endpoints = await repos.endpoints.getMany(event.targets);
    await repos.deliveries.insertMany(await firstDeliveries(event, endpoints, now));
    await repos.events.markFannedOut([event.id]);
  }

  /**
   * Stores the first deliveries of the event's targets, then the event, and wakes the dispatcher
   * (ADR 2). The deliveries go first, so a stored event always has its deliveries and needs no
   * "fan-out pending" flag to be cleared afterwards (one write per event fewer): if the process dies
   * in between, the publish was never answered, and the engine holds such deliveries back while their
   * event may still come (a repeat with the same Idempotency-Key stores it under the same id and the
   * same delivery ids), then cancels them. Returns the first deliveries, or null when an event with
   * this id was stored already.
   */
  async function accept(
    scope: Scope,
    envelope: Envelope,
    targets: readonly Endpoint[],
    now: Date,
    traceparent?: string,
  ): Promise<Delivery[] | null> {
    const event = storedEvent(
      scope,
      envelope,
      targets,
      now,
      await recipientKeyOf(scope, envelope),
      traceparent,
    );
    const deliveries = await firstDeliveries(event, targets, now);
    if (repos.events.insertWithDeliveries) {
      // One transaction: no window in which deliveries wait for their event (docs/adr/0018-postgres-store.md).
      if (!(await repos.events.insertWithDeliveries(event, deliveries))) return null;
    } else {
      // Ids derive from (event, endpoint): a repeat under the same event id inserts nothing new.
      if (deliveries.length > 0) await repos.deliveries.insertMany(deliveries);
      if (!(await repos.events.insert(event))) return null;
    }
    if (deliveries.length > 0) signal.notify({ event, deliveries, endpoints: targets });
    return deliveries;
  }

  /** What erasure finds the event by (ADR 15): a keyed hash of its recipient, if it has one. */
  async function recipientKeyOf(scope: Scope, envelope: Envelope): Promise<string | null> {
    const { recipient } = subjectsOf(envelope);
    return recipient === null ? null : subjects.recipientKey(scope, recipient);
  }

  function storedEvent(
    scope: Scope,
    envelope: Envelope,
    targets: readonly Endpoint[],
    now: Date,
    recipientKey: string | null,
    traceparent: string | undefined,
  ): StoredEvent {
    return {
      id: envelope.id,
      tenantId: scope.tenantId,
      projectId: scope.projectId,
      type: envelope.type,
      body: serializeEnvelope(envelope),
      occurredAt: new Date(envelope.occurred_at),
      createdAt: now,
      targets: targets.map((e) => e.id),
      fanoutPending: false,
      resourceId: subjectsOf(envelope).resourceId,
      recipientKey,
      // Taken as late as possible before the write: a publish that begins after this one answered is later.
      sequence: nextSequence(clock.now()),
      traceparent: traceparent ?? null,
    };
  }

  /**
   * `accept` for several events at once, with as few writes as the store allows: their sequences follow
   * the order given; a store with transactions gets every event's insert in the same turn (its natural
   * batching folds concurrent inserts into one statement, or a few); one without gets all first
   * deliveries in one insertMany, then the events' inserts, concurrently (batched the same way).
   * Answers per event: its first deliveries, null when an event with its id was stored already, or
   * the error its own write met.
   */
  async function acceptMany(
    scope: Scope,
    items: readonly { envelope: Envelope; targets: readonly Endpoint[]; traceparent?: string | undefined }[],
    now: Date,
  ): Promise<({ ok: Delivery[] | null } | { error: unknown })[]> {
    const keys = await Promise.all(items.map((it) => recipientKeyOf(scope, it.envelope)));
    const events = items.map((it, i) =>
      storedEvent(scope, it.envelope, it.targets, now, keys[i] ?? null, it.traceparent),
    );
    const deliveries = await Promise.all(events.map((e, i) => firstDeliveries(e, items[i]!.targets, now)));
    let stored: PromiseSettledResult<boolean>[];
    const insertWithDeliveries = repos.events.insertWithDeliveries?.bind(repos.events);
    if (insertWithDeliveries) {
      stored = await Promise.allSettled(events.map((e, i) => insertWithDeliveries(e, deliveries[i]!)));
    } else {
      // Deliveries first (ADR 2), all in one write; an event whose insert then fails leaves deliveries
      // the engine holds back and cancels, exactly as for one publish.
      const all = deliveries.flat();
      try {
        if (all.length > 0) await repos.deliveries.insertMany(all);
      } catch (error) {
        return items.map(() => ({ error }));
      }
      stored = await Promise.allSettled(events.map((e) => repos.events.insert(e)));
    }
    return stored.map((s, i) => {
      if (s.status === "rejected") return { error: s.reason as unknown };
      if (!s.value) return { ok: null };
      const event = events[i]!;
      if (deliveries[i]!.length > 0)
        signal.notify({ event, deliveries: deliveries[i]!, endpoints: items[i]!.targets });
      return { ok: deliveries[i]! };
    });
  }

  /**
   * The first answer again. If the first request died between storing the event and its deliveries,
   * the repeat finishes the fan-out now (safe to repeat) rather than leaving it to the maintenance job.
   */
  async function replay(earlier: StoredEvent, now: Date): Promise<PublishResult> {
    // Younger than that, the flag may only be waiting for its batched write, not for a dead process.
    if (earlier.fanoutPending && now.getTime() - earlier.createdAt.getTime() >= REPLAY_FINISHES_AFTER_MS) {
      await fanOut(earlier, now);
      signal.notify();
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

  /** The answer once the write is done; an event stored already under this id is the first answer again. */
  async function answer(
    scope: Scope,
    p: Extract<Prepared, { kind: "new" }>,
    accepted: boolean,
    now: Date,
  ): Promise<PublishResult> {
    const { envelope, targets } = p;
    if (!accepted) {
      const earlier = await repos.events.get(scope, envelope.id);
      if (!earlier) throw new Error(`event ${envelope.id} exists in another scope`);
      return replay(earlier, now);
    }
    if (targets.length < p.subscribed) metrics.eventsFiltered(envelope.type, p.subscribed - targets.length);
    return { envelope, endpoints: targets.length, replayed: false };
  }

  /**
   * One publish; with tracing on, inside its span and its fan-out's, whose traceparent the event stores
   * (ADR 24).
   */
  async function publishOne(
    span: PublishSpan | null,
    scope: Scope,
    input: PublishInput,
  ): Promise<PublishResult> {
    let fanOut: FanOutSpan | null = null;
    try {
      const now = clock.now();
      const p = await prepare(scope, input, now);
      if (p.kind === "replay") {
        span?.end(publishOutcome({ ok: p.result }));
        return p.result;
      }
      fanOut = span?.fanOut(p.envelope.id) ?? null;
      const accepted = await accept(scope, p.envelope, p.targets, now, fanOut?.traceparent);
      fanOut?.end({ endpoints: p.targets.length, stored: accepted !== null });
      fanOut = null;
      const result = await answer(scope, p, accepted !== null, now);
      span?.end(publishOutcome({ ok: result }));
      return result;
    } catch (error) {
      fanOut?.end({ error });
      span?.end({ error });
      throw error;
    }
  }

  return {
    async publish(scope: Scope, input: PublishInput): Promise<PublishResult> {
      return publishOne(
        tracing === null ? null : tracing.publish(input.type, input.traceparent),
        scope,
        input,
      );
    },

    /**
     * Publishes up to MAX_BATCH_EVENTS events as one: each is checked, keyed and targeted on its own
     * (one bad event fails alone), then every new one is written at once (acceptMany). Answers one
     * outcome per input, in order.
     */
    async publishMany(scope: Scope, inputs: readonly PublishInput[]): Promise<PublishOutcome[]> {
      if (inputs.length > MAX_BATCH_EVENTS) {
        throw invalid([{ path: "events", message: `must hold at most ${MAX_BATCH_EVENTS} events` }]);
      }
      const now = clock.now();
      // Events of one type have the same subscribers: one read per type in the batch, not per event.
      const read = new Map<EventType, Promise<Endpoint[]>>();
      const subscribers = (type: EventType) => {
        let endpoints = read.get(type);
        if (!endpoints) {
          endpoints = repos.endpoints.listSubscribed(scope, type);
          read.set(type, endpoints);
        }
        return endpoints;
      };
      // Traced: one publish span per event, each a child of the request's traceparent (ADR 24).
      const spans = tracing === null ? null : inputs.map((i) => tracing.publish(i.type, i.traceparent));
      const prepared = await Promise.allSettled(
        inputs.map((input) => prepare(scope, input, now, subscribers)),
      );
      const fresh = prepared.flatMap((r, at) =>
        r.status === "fulfilled" && r.value.kind === "new" ? [{ at, p: r.value }] : [],
      );
      const fanOuts = spans && fresh.map(({ at, p }) => spans[at]!.fanOut(p.envelope.id));
      const written = await acceptMany(
        scope,
        fresh.map((f, i) => (fanOuts ? { ...f.p, traceparent: fanOuts[i]!.traceparent } : f.p)),
        now,
      );
      const answered = await Promise.all(
        fresh.map(({ p }, i): Promise<PublishOutcome> => {
          const w = written[i]!;
          if ("error" in w) return Promise.resolve({ error: w.error });
          return answer(scope, p, w.ok !== null, now).then(
            (ok) => ({ ok }),
            (error: unknown) => ({ error }),
          );
        }),
      );
      const byIndex = new Map(fresh.map((f, i) => [f.at, answered[i]!]));
      const outcomes = prepared.map((r, at): PublishOutcome => {
        if (r.status === "rejected") return { error: r.reason as unknown };
        return r.value.kind === "replay" ? { ok: r.value.result } : byIndex.get(at)!;
      });
      if (spans) {
        fresh.forEach(({ p }, i) => {
          const w = written[i]!;
          fanOuts![i]!.end("error" in w ? w : { endpoints: p.targets.length, stored: w.ok !== null });
        });
        for (const [at, o] of outcomes.entries()) spans[at]!.end(publishOutcome(o));
      }
      return outcomes;
    },

    accept,

    async get(scope: Scope, id: string): Promise<Envelope> {
      const event = await repos.events.get(scope, id);
      if (!event) throw notFound("The event");
      return envelopeOf(event);
    },

    /** Whether an event is stored under this Idempotency-Key, published within the key's window. */
    async storedUnder(scope: Scope, idempotencyKey: string): Promise<boolean> {
      const held = await repos.idempotency.find(
        keyInScope(scope, idempotencyKey),
        new Date(clock.now().getTime() - IDEMPOTENCY_WINDOW_MS),
      );
      return held !== null && (await repos.events.get(scope, held.eventId)) !== null;
    },

    /**
     * Finishes fan-outs that a crashed process left undone (events stored with fanoutPending, by a
     * version that wrote the event first); returns how many events it completed.
     */
    async completeFanouts(limit = 500): Promise<number> {
      const now = clock.now();
      const pending = await repos.events.listFanoutPending(new Date(now.getTime() - FANOUT_GRACE_MS), limit);
      for (const event of pending) await fanOut(event, now);
      if (pending.length > 0) signal.notify();
      return pending.length;
    },
  };
}

export type EventUseCases = ReturnType<typeof eventUseCases>;

function publishOutcome(
  o: PublishOutcome,
): { eventId: string; endpoints: number; replayed: boolean } | { error: unknown } {
  return "error" in o ? o : { eventId: o.ok.envelope.id, endpoints: o.ok.endpoints, replayed: o.ok.replayed };
}
