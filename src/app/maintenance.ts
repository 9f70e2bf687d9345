import { type EventUseCases, IDEMPOTENCY_WINDOW_MS } from "./events.ts";
import type { Logger } from "./logger.ts";
import type { DeliveryMetrics } from "./ports/sending.ts";
import type { Repositories } from "./ports/store.ts";
import type { Clock } from "./ports/system.ts";

export interface MaintenanceDeps {
  repos: Repositories;
  clock: Clock;
  events: EventUseCases;
  metrics: DeliveryMetrics;
  logger: Logger;
  disableAfterMs: number;
  retentionMs: number;
}

/** The safety-net jobs: they are idempotent, so several processes may run them at once. */
export function maintenanceJobs(deps: MaintenanceDeps) {
  const { repos, clock, logger } = deps;
  return {
    /** Creates deliveries that a crash left unmade between storing an event and fanning it out. */
    async finishFanouts(): Promise<number> {
      const n = await deps.events.completeFanouts();
      if (n > 0) logger.warn("finished interrupted fan-outs", { events: n });
      return n;
    },

    /** Disables endpoints that have failed without a single success for the configured time. */
    async disableFailing(): Promise<number> {
      const now = clock.now();
      const failing = await repos.endpoints.listFailingSince(
        new Date(now.getTime() - deps.disableAfterMs),
        500,
      );
      let n = 0;
      for (const e of failing) {
        if (await repos.endpoints.disable(e.id, "failing", now)) {
          n++;
          deps.metrics.endpointDisabled("failing");
          logger.warn("endpoint disabled after failing without success", { webhook_id: e.id });
        }
      }
      return n;
    },

    /** Deletes events and finished delivery records older than the retention period. */
    async applyRetention(): Promise<{ events: number; deliveries: number }> {
      const before = new Date(clock.now().getTime() - deps.retentionMs);
      const deliveries = await repos.deliveries.deleteCreatedBefore(before);
      const events = await repos.events.deleteCreatedBefore(before);
      // Idempotency keys answer repeats for 24 hours; after that they only take space.
      const keys = await repos.idempotency.deleteCreatedBefore(
        new Date(clock.now().getTime() - IDEMPOTENCY_WINDOW_MS),
      );
      if (events || deliveries || keys)
        logger.info("retention applied", { events, deliveries, idempotency_keys: keys });
      return { events, deliveries };
    },
  };
}

export type MaintenanceJobs = ReturnType<typeof maintenanceJobs>;
