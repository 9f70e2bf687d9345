import type { Delivery } from "../domain/delivery.ts";
import type { Endpoint } from "../domain/endpoint.ts";
import { type Envelope, serializeEnvelope } from "../domain/envelope.ts";
import { subjectsOf } from "../domain/erasure.ts";
import { firstDeliveryId } from "../domain/ids.ts";
import type { AppDeps } from "./deps.ts";
import type { StoredEvent } from "./ports/events.ts";
import type { Scope } from "./ports/paging.ts";

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

/** The first delivery of an event to each of its target endpoints; a disabled endpoint gets a skipped record. */
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

/**
 * Storing accepted events with their first deliveries, one or many at a time, and waking the engine;
 * and finishing a fan-out an older version left undone.
 */
export function eventAcceptance(deps: AppDeps) {
  const { repos, clock, signal, subjects } = deps;
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

  return { accept, acceptMany, fanOut };
}

export type EventAcceptance = ReturnType<typeof eventAcceptance>;
