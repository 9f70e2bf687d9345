import type { Delivery } from "../../domain/delivery.ts";
import type { Logger } from "../logger.ts";
import type { DeliveryRepository } from "../ports/deliveries.ts";
import type { Clock } from "../ports/system.ts";
import { EVENT_RECHECK_MS } from "./prepare.ts";

/** How long a delivery whose event is not stored yet is held in memory before it is read again, by time found so. */
export const EVENT_SOON_MS = [250, 500, 1_000] as const;
/** Deliveries remembered as found without their event (each is read again at most EVENT_SOON_MS.length times). */
const REMEMBERED = 10_000;

/**
 * Deliveries whose event is not stored yet (ADR 2: a publish stores its deliveries, then its event).
 * Almost always the publish is on its way and stores the event a moment later: such a delivery is held
 * here (not claimed again, not handed over) for EVENT_SOON_MS, then let go and read again, with no
 * write; a publish of this process takes it at once when it ends (`eventStored`). Found so more often,
 * its publish most likely died between its two writes: it is moved EVENT_RECHECK_MS on in the store
 * (one write per batch) and let go; the due read finds it again then.
 * Owns those waits and the count of them (the engine is not idle while one is on its way).
 */
export function postponer(deps: {
  deliveries: Pick<DeliveryRepository, "postpone">;
  clock: Clock;
  logger: Logger;
  /** The wait ended (either way): stop holding them. */
  done(ids: readonly string[]): void;
  /** What was moved on (or failed to be, and is due now) comes due at `at` (wall-clock ms). */
  due?(at: number): void;
  /** Held here, now let go: claim soon, reading the store (before `done`, so the engine stays busy). */
  recheck(): void;
}) {
  let pending = 0;
  const found = new Map<string, number>();
  /** The waits in memory: each timer with the ids it still holds. */
  const timers = new Map<ReturnType<typeof setTimeout>, Set<string>>();

  function writeLater(ids: readonly string[]): Promise<void> {
    pending++;
    const until = deps.clock.now().getTime() + EVENT_RECHECK_MS;
    return deps.deliveries
      .postpone(ids, new Date(until))
      .then(
        () => until,
        (e) => {
          deps.logger.warn("postponing deliveries whose event is not stored failed", { error: e as Error });
          return deps.clock.now().getTime();
        },
      )
      .then((at) => {
        pending--;
        deps.done(ids);
        deps.due?.(at);
      });
  }

  function holdFor(ms: number, ids: readonly string[]) {
    pending++;
    const held = new Set(ids);
    const timer = setTimeout(() => {
      timers.delete(timer);
      deps.recheck();
      pending--;
      deps.done([...held]);
    }, ms);
    timers.set(timer, held);
  }

  return {
    postpone(deliveries: readonly Pick<Delivery, "id">[]): Promise<void> {
      const byWait = new Map<number, string[]>();
      const later: string[] = [];
      for (const { id } of deliveries) {
        const times = found.get(id) ?? 0;
        if (times >= EVENT_SOON_MS.length) {
          found.delete(id);
          later.push(id);
          continue;
        }
        if (found.size >= REMEMBERED) found.clear();
        found.set(id, times + 1);
        const ms = EVENT_SOON_MS[times]!;
        byWait.set(ms, [...(byWait.get(ms) ?? []), id]);
      }
      for (const [ms, ids] of byWait) holdFor(ms, ids);
      return later.length > 0 ? writeLater(later) : Promise.resolve();
    },
    /**
     * These deliveries' event is stored now (their publish, in this process, has ended): what waits here
     * of them stops waiting and is answered, still held, for the publish's hand-over to take at once.
     */
    eventStored(ids: readonly string[]): string[] {
      const gone: string[] = [];
      for (const [timer, held] of timers) {
        for (const id of ids) if (held.delete(id)) gone.push(id);
        if (held.size === 0) {
          clearTimeout(timer);
          timers.delete(timer);
          pending--;
        }
      }
      return gone;
    },
    /** Waits and writes on their way. */
    get pending(): number {
      return pending;
    },
    /** The engine stops: what is held here is let go at once (it stays pending in the store). */
    stop(): void {
      for (const [timer, held] of timers) {
        clearTimeout(timer);
        pending--;
        deps.done([...held]);
      }
      timers.clear();
    },
  };
}
