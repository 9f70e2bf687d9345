import { type Delivery, repeatAttempt } from "../domain/delivery.ts";
import { buildEnvelope, type Envelope, newEventId } from "../domain/envelope.ts";
import { DomainError, invalid, notFound } from "../domain/errors.ts";
import type { EventType } from "../domain/event-catalog.ts";
import { sampleEventData } from "../domain/samples.ts";
import type { AppDeps } from "./deps.ts";
import type { EventUseCases } from "./events.ts";
import { filterTester } from "./filter-test.ts";
import type { Scope } from "./ports/paging.ts";

/** Longest window POST /webhooks/{id}/recover accepts. */
export const RECOVERY_WINDOW_LIMIT_MS = 14 * 86_400_000;
const RECOVERY_PAGE = 500;

export interface TestDelivery {
  event: Envelope;
  delivery: Delivery;
}

export interface Recovery {
  queued: number;
  since: Date;
  until: Date;
}

/** Operator tools on one endpoint: a test event, a filter test, and recovery after an outage. */
export function endpointTools(deps: AppDeps, events: EventUseCases) {
  const { repos, clock, ids, signal } = deps;

  const enabledEndpoint = async (scope: Scope, id: string) => {
    const endpoint = await repos.endpoints.get(scope, id);
    if (!endpoint) throw notFound("The endpoint");
    if (!endpoint.enabled) {
      throw new DomainError(
        "endpoint_disabled",
        `The endpoint is disabled (${endpoint.disabledReason ?? "manual"}); enable it first.`,
      );
    }
    return endpoint;
  };

  return {
    ...filterTester(deps),

    /** Sends a sample event of one of the endpoint's types to that endpoint only, recorded like any delivery. */
    async sendTest(scope: Scope, id: string, type?: EventType): Promise<TestDelivery> {
      const endpoint = await enabledEndpoint(scope, id);
      const chosen = type ?? endpoint.events[0];
      if (!chosen || !endpoint.events.includes(chosen)) {
        throw invalid([
          {
            path: "type",
            message: `must be one of the endpoint's event types: ${endpoint.events.join(", ")}`,
          },
        ]);
      }
      const now = clock.now();
      const envelope = buildEnvelope({
        id: newEventId(ids.randomBytes(16)),
        type: chosen,
        data: sampleEventData(chosen, { subjectId: ids.uuid() }, now),
        tenantId: scope.tenantId,
        projectId: scope.projectId,
        occurredAt: now,
      });
      const deliveries = await events.accept(scope, envelope, [endpoint], now);
      const delivery = deliveries?.[0];
      if (!delivery) throw new Error("a fresh test event collided with an existing id");
      return { event: envelope, delivery };
    },

    /**
     * Queues one manual delivery for every event created in [since, until) whose latest delivery to the
     * endpoint failed or was skipped. Events still being retried (latest pending) are left alone.
     */
    async recover(scope: Scope, id: string, since: Date, until?: Date): Promise<Recovery> {
      const now = clock.now();
      const end = until ?? now;
      if (end.getTime() <= since.getTime()) {
        throw invalid([{ path: "until", message: "must be after since" }]);
      }
      if (end.getTime() - since.getTime() > RECOVERY_WINDOW_LIMIT_MS) {
        throw invalid([{ path: "since", message: "must be at most 14 days before until" }]);
      }
      const endpoint = await enabledEndpoint(scope, id);
      let queued = 0;
      let after: string | undefined;
      for (;;) {
        const batch = await repos.events.listCreatedBetween(scope, since, end, RECOVERY_PAGE, after);
        if (batch.length === 0) break;
        after = batch[batch.length - 1]!.id;
        const latest = await repos.deliveries.latestForEvents(
          endpoint.id,
          batch.map((e) => e.id),
        );
        const replays: Delivery[] = [];
        for (const d of latest.values()) {
          if (d.status !== "failed" && d.status !== "skipped") continue;
          replays.push(
            repeatAttempt(d, {
              id: ids.uuid(),
              attempt: d.attempt + 1,
              trigger: "manual",
              url: endpoint.url,
              scheduledAt: now,
              createdAt: now,
            }),
          );
        }
        if (replays.length) await repos.deliveries.insertMany(replays);
        queued += replays.length;
        if (batch.length < RECOVERY_PAGE) break;
      }
      if (queued > 0) signal.notify({ endpointIds: [endpoint.id] });
      return { queued, since, until: end };
    },
  };
}

export type EndpointTools = ReturnType<typeof endpointTools>;
