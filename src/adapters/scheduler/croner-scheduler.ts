import { Cron } from "croner";
import type { Dispatcher } from "../../app/engine/engine.ts";
import type { Logger } from "../../app/logger.ts";
import type { MaintenanceJobs } from "../../app/maintenance.ts";

export interface SchedulerHandle {
  stop(): void;
}

/**
 * The safety net behind the dispatcher's immediate wake-ups: every second it claims due work (retries
 * that came due, work nobody announced; the dispatcher reads only when something may have come due,
 * ADR 30), every 30 s it finishes interrupted fan-outs, disables
 * failing endpoints and publishes the operational events still owed (ADR 20), every hour it applies
 * retention. `protect` keeps a slow run from overlapping itself.
 */
export function startScheduler(
  dispatcher: Dispatcher,
  jobs: MaintenanceJobs,
  logger: Logger,
): SchedulerHandle {
  const guarded = (name: string, job: () => Promise<unknown>) => async () => {
    try {
      await job();
    } catch (e) {
      logger.warn(`scheduled job ${name} failed; it runs again on schedule`, { error: e as Error });
    }
  };
  const crons = [
    new Cron("* * * * * *", { protect: true, name: "claim-due" }, () => dispatcher.tick()),
    new Cron(
      "*/30 * * * * *",
      { protect: true, name: "fanout-and-health" },
      guarded("maintenance", async () => {
        await jobs.finishFanouts();
        // Before the disable: a streak past HERALD_FAILING_AFTER is reported while its endpoint is still on.
        await jobs.reportOperational();
        await jobs.disableFailing();
      }),
    ),
    new Cron(
      "17 7 * * * *",
      { protect: true, name: "retention" },
      guarded("retention", () => jobs.applyRetention()),
    ),
  ];
  return {
    stop() {
      for (const c of crons) c.stop();
    },
  };
}
