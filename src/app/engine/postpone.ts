import type { Logger } from "../logger.ts";
import type { DeliveryRepository } from "../ports/deliveries.ts";
import type { Clock } from "../ports/system.ts";
import { EVENT_RECHECK_MS } from "./prepare.ts";

/**
 * Deliveries whose event is not stored yet (a publish on its way, or one that died between its two
 * writes) are moved a few seconds on, then let go; the due read finds them again then. Rare: it costs
 * one write per batch of them. Owns the count of such writes still on their way (the engine is not
 * idle while one is).
 */
export function postponer(deps: {
  deliveries: Pick<DeliveryRepository, "postpone">;
  clock: Clock;
  logger: Logger;
  /** The write ended (either way): stop holding them. */
  done(ids: readonly string[]): void;
}) {
  let pending = 0;
  return {
    postpone(ids: readonly string[]): Promise<void> {
      pending++;
      return deps.deliveries
        .postpone(ids, new Date(deps.clock.now().getTime() + EVENT_RECHECK_MS))
        .catch((e) =>
          deps.logger.warn("postponing deliveries whose event is not stored failed", { error: e as Error }),
        )
        .finally(() => {
          pending--;
          deps.done(ids);
        });
    },
    /** Writes on their way. */
    get pending(): number {
      return pending;
    },
  };
}
