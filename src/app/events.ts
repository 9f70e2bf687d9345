import type { Endpoint } from "../domain/endpoint.ts";
import type { Envelope } from "../domain/envelope.ts";
import { invalid, notFound } from "../domain/errors.ts";
import type { EventType } from "../domain/event-catalog.ts";
import type { AppDeps } from "./deps.ts";
import { eventAcceptance } from "./event-acceptance.ts";
import {
  envelopeOf,
  IDEMPOTENCY_WINDOW_MS,
  keyInScope,
  type Prepared,
  type PublishInput,
  type PublishResult,
  publishPreparation,
} from "./event-preparation.ts";
import type { FanOutMetrics } from "./ports/events.ts";
import type { Scope } from "./ports/paging.ts";
import type { FanOutSpan, PublishSpan } from "./ports/tracing.ts";

export type { PublishInput, PublishResult } from "./event-preparation.ts";

/** One event's outcome in a batch: its result, or the error that event alone met. */
export type PublishOutcome = { ok: PublishResult } | { error: unknown };

/** Most events one batch publish may hold. */
export const MAX_BATCH_EVENTS = 100;

/**
 * How long a fan-out may be in progress before the maintenance job finishes it. Only events stored
 * with `fanoutPending` (by versions that wrote the event before its deliveries) can need it.
 */
export const FANOUT_GRACE_MS = 30_000;

/** Accepting events from the publisher and fanning them out to subscribed endpoints. */
export function eventUseCases(deps: AppDeps, metrics: FanOutMetrics) {
  const { repos, clock, signal } = deps;
  const tracing = deps.tracing ?? null;
  const { accept, acceptMany, fanOut } = eventAcceptance(deps);
  const { prepare, replay } = publishPreparation(deps, fanOut);

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
      if (pending.length > 0) signal.notify({ endpointIds: [...new Set(pending.flatMap((e) => e.targets))] });
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
