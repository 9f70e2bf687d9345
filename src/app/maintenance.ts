import { IDEMPOTENCY_WINDOW_MS } from "./event-preparation.ts";
import type { EventUseCases } from "./events.ts";
import type { Logger } from "./logger.ts";
import type { OperationalEvents } from "./operational.ts";
import type { Scope } from "./ports/paging.ts";
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
  /** Operational events (ADR 20); absent: none are emitted. */
  operational?: OperationalEvents;
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
          deps.operational?.disabled(e.id);
        }
      }
      return n;
    },

    /**
     * Publishes the operational events still owed (ADR 20): endpoint.failing of streaks that reached
     * HERALD_FAILING_AFTER, endpoint.disabled of disables whose process died before publishing it.
     */
    async reportOperational(): Promise<number> {
      if (!deps.operational) return 0;
      const n = await deps.operational.reportOwed();
      if (n > 0) logger.info("operational events published", { events: n });
      return n;
    },

    /**
     * Deletes events, finished delivery records and erasure records older than the retention period:
     * HERALD_RETENTION for every project, then each project's own shorter one (ADR 15).
     */
    async applyRetention(): Promise<{ events: number; deliveries: number }> {
      const now = clock.now().getTime();
      const sweep = async (retentionMs: number, scope?: Scope) => {
        const before = new Date(now - retentionMs);
        return {
          deliveries: await repos.deliveries.deleteCreatedBefore(before, scope),
          events: await repos.events.deleteCreatedBefore(before, scope),
          erasures: await repos.erasures.deleteCreatedBefore(before, scope),
        };
      };
      const total = await sweep(deps.retentionMs);
      let projects = 0;
      for (const s of await repos.settings.withRetention()) {
        if (s.retentionMs === null || s.retentionMs >= deps.retentionMs) continue;
        const own = await sweep(s.retentionMs, s);
        total.deliveries += own.deliveries;
        total.events += own.events;
        total.erasures += own.erasures;
        projects++;
      }
      // Idempotency keys answer repeats for 24 hours; after that they only take space.
      const keys = await repos.idempotency.deleteCreatedBefore(new Date(now - IDEMPOTENCY_WINDOW_MS));
      if (total.events || total.deliveries || total.erasures || keys)
        logger.info("retention applied", {
          events: total.events,
          deliveries: total.deliveries,
          erasures: total.erasures,
          idempotency_keys: keys,
          projects_with_own_retention: projects,
        });
      return { events: total.events, deliveries: total.deliveries };
    },
  };
}

export type MaintenanceJobs = ReturnType<typeof maintenanceJobs>;
