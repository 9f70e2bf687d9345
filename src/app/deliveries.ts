import { type Delivery, repeatAttempt } from "../domain/delivery.ts";
import { DomainError, notFound } from "../domain/errors.ts";
import { isoMillis } from "../domain/time.ts";
import type { AppDeps } from "./deps.ts";
import type { DeliveryFilter } from "./ports/deliveries.ts";
import type { Page, PageRequest, Scope } from "./ports/paging.ts";

/** Reading delivery records and replaying a delivery by hand. */
export function deliveryUseCases(deps: AppDeps) {
  const { repos, clock, ids, signal } = deps;

  return {
    async list(
      scope: Scope,
      webhookId: string,
      filter: DeliveryFilter,
      page: PageRequest,
    ): Promise<Page<Delivery>> {
      if (!(await repos.endpoints.get(scope, webhookId))) throw notFound("The endpoint");
      return repos.deliveries.list(scope, webhookId, filter, page);
    },

    async get(scope: Scope, id: string): Promise<Delivery> {
      const d = await repos.deliveries.get(scope, id);
      if (!d) throw notFound("The delivery");
      return d;
    },

    /** Queues a new manual attempt of the same event to the same endpoint; it is not retried automatically. */
    async retry(scope: Scope, id: string): Promise<Delivery> {
      const original = await repos.deliveries.get(scope, id);
      if (!original) throw notFound("The delivery");
      if (original.erasedAt) {
        throw new DomainError(
          "conflict",
          `The delivery's event was erased at ${isoMillis(original.erasedAt)}; an erased event is never sent again.`,
        );
      }
      const endpoint = await repos.endpoints.get(scope, original.webhookId);
      if (!endpoint) throw notFound("The delivery's endpoint");
      if (!endpoint.enabled) {
        throw new DomainError(
          "endpoint_disabled",
          `The endpoint is disabled (${endpoint.disabledReason ?? "manual"}); enable it before retrying.`,
        );
      }
      if (!(await repos.events.get(scope, original.eventId))) {
        throw new DomainError("conflict", "The event is no longer retained, so it cannot be sent again.");
      }
      const key = `${original.eventId}/${original.webhookId}`;
      const max = (await repos.deliveries.maxAttempts([original])).get(key) ?? original.attempt;
      const now = clock.now();
      const delivery = repeatAttempt(original, {
        id: ids.uuid(),
        attempt: max + 1,
        trigger: "manual",
        url: endpoint.url,
        scheduledAt: now,
        createdAt: now,
      });
      await repos.deliveries.insertMany([delivery]);
      // The endpoint's owner may be another process: it is told (ADR 30).
      signal.notify({ endpointIds: [delivery.webhookId] });
      return delivery;
    },
  };
}

export type DeliveryUseCases = ReturnType<typeof deliveryUseCases>;
