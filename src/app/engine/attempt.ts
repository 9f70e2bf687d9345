import type { EndpointRepository } from "../ports/endpoints.ts";
import type { DeliveryMetrics } from "../ports/sending.ts";
import type { Tracing } from "../ports/tracing.ts";
import { decide } from "./decide.ts";
import type { EngineDeps } from "./dispatcher.ts";
import { sendPrepared } from "./send.ts";
import { traceAttempt } from "./trace.ts";
import type { Decided, Prepared } from "./work.ts";

export interface AttemptDeps
  extends Pick<EngineDeps, "sender" | "brokers" | "clock" | "logger" | "ids" | "operational"> {
  endpoints: Pick<EndpointRepository, "disable">;
  metrics: DeliveryMetrics;
  tracing: Tracing | null;
  retryScheduleMs: readonly number[];
  /** The endpoint is being disabled: what a publish read of it no longer holds. */
  stale(endpointId: string): void;
  /** Hands the decided result to the recorder (stage 6). */
  record(decided: Decided): void;
  /** The attempt ended (recorded or crashed): its slot is free. */
  ended(p: Prepared): void;
}

/** Runs attempts in the background; each ends with `ended`, whatever happened. */
export function attempter(deps: AttemptDeps) {
  return {
    run(p: Prepared, at: Date): void {
      void attemptPrepared(p, at, deps)
        .catch((e) =>
          deps.logger.error("delivery attempt crashed", { error: e as Error, delivery_id: p.delivery.id }),
        )
        .finally(() => deps.ended(p));
    },
  };
}

/**
 * Stages 4 and 5 for one prepared delivery: send (traced when tracing is on), decide, disable the
 * endpoint when the decision says so, then hand the result to the recorder.
 */
export async function attemptPrepared(
  p: Prepared,
  at: Date,
  deps: Omit<AttemptDeps, "ended">,
): Promise<void> {
  const { clock, metrics } = deps;
  const span = deps.tracing === null ? null : traceAttempt(deps.tracing, p);
  const sent = await sendPrepared(p, deps, at, span?.traceparent);
  if (p.delivery.attempt === 1 && p.delivery.trigger === "automatic") {
    metrics.publishToAttempt(clock.now().getTime() - p.event.createdAt.getTime());
  }
  const decided = decide(sent, {
    retryScheduleMs: deps.retryScheduleMs,
    random: deps.ids.random(),
    now: clock.now(),
  });
  span?.end(decided.result);
  if (decided.disable) {
    deps.stale(decided.endpointId);
    if (await deps.endpoints.disable(decided.endpointId, decided.disable, clock.now())) {
      metrics.endpointDisabled(decided.disable);
      deps.operational?.disabled(decided.endpointId);
    }
  }
  deps.record(decided);
}
