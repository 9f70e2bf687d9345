import { DomainError } from "../domain/errors.ts";
import {
  disabledNotice,
  failingNotice,
  type OperationalNotice,
  recoveredNotice,
} from "../domain/operational.ts";
import type { EventUseCases } from "./events.ts";
import type { Logger } from "./logger.ts";
import type { Repositories } from "./ports/store.ts";
import type { Clock } from "./ports/system.ts";

export interface OperationalDeps {
  repos: Repositories;
  clock: Clock;
  events: EventUseCases;
  logger: Logger;
  /** HERALD_FAILING_AFTER: how long a failure streak lasts before endpoint.failing is sent. */
  failingAfterMs: number;
}

/** Most occurrences of each kind one run of the reporting job publishes. */
const REPORT_PAGE = 200;
/**
 * A disable is left to the process that made it (it publishes at once) for this long before the job
 * publishes it instead; a repeat would publish nothing new, this only spares the work.
 */
const DISABLED_GRACE_MS = 10_000;

/**
 * Operational events (ADR 20): Herald's own events about the project's endpoints, published through the
 * ordinary publish path (signed, retried, recorded like any event) into the endpoint's project, with an
 * Idempotency-Key derived from the occurrence. Publish first, then mark the occurrence reported: a crash
 * in between leaves it owed, and the next try replays the first publish instead of making a second.
 */
export function operationalEvents(deps: OperationalDeps) {
  const { repos, clock, events, logger } = deps;

  /** Publishes one notice; a notice the catalog refuses is a bug, logged once and dropped, never retried forever. */
  async function publish(n: OperationalNotice): Promise<void> {
    try {
      await events.publish(
        { tenantId: n.tenantId, projectId: n.projectId },
        {
          type: n.type,
          data: n.data,
          idempotencyKey: n.key,
          operational: { aboutEndpoint: n.endpointId, fingerprint: n.key },
        },
      );
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
      logger.error("an operational event was refused; it is dropped", {
        error: e,
        type: n.type,
        webhook_id: n.endpointId,
      });
    }
  }

  /** Publishes the endpoint.disabled the endpoint owes, if any, then marks it reported. */
  async function reportDisabled(endpointId: string): Promise<boolean> {
    const [endpoint] = await repos.endpoints.getMany([endpointId]);
    const n = endpoint ? disabledNotice(endpoint) : null;
    if (!endpoint?.disabledAt || !n) return false;
    await publish(n);
    await repos.endpoints.markReported(endpoint.id, "disabled", endpoint.disabledAt);
    return true;
  }

  return {
    publish,
    reportDisabled,

    /** reportDisabled in the background; on failure the reporting job publishes it later. */
    disabled(endpointId: string): void {
      void reportDisabled(endpointId).catch((e: unknown) =>
        logger.warn("publishing endpoint.disabled failed; the maintenance job tries again", {
          error: e as Error,
          webhook_id: endpointId,
        }),
      );
    },

    /**
     * The engine's recorder calls this before writing results: delivery.exhausted of the events given up,
     * and endpoint.recovered of each endpoint among `streaksEnded` whose streak was reported (read now,
     * before the streak is cleared).
     */
    async announce(exhausted: readonly OperationalNotice[], streaksEnded: readonly string[]): Promise<void> {
      for (const n of exhausted) await publish(n);
      if (streaksEnded.length === 0) return;
      for (const e of await repos.endpoints.getMany(streaksEnded)) {
        const n = recoveredNotice(e);
        if (n) await publish(n);
      }
    },

    /**
     * The reporting job (every 30 s, in every process): endpoint.failing for streaks that reached
     * HERALD_FAILING_AFTER, and endpoint.disabled for disables whose process died before publishing it.
     * Answers how many events it published.
     */
    async reportOwed(): Promise<number> {
      const now = clock.now();
      let n = 0;
      const failing = await repos.endpoints.listUnreported(
        "failing",
        new Date(now.getTime() - deps.failingAfterMs),
        REPORT_PAGE,
      );
      for (const e of failing) {
        const notice = failingNotice(e, now, deps.failingAfterMs);
        // An operations endpoint's streak owes nothing; it is marked so it is not read again.
        if (notice) {
          await publish(notice);
          n++;
        }
        if (e.failingSince) await repos.endpoints.markReported(e.id, "failing", e.failingSince);
      }
      const disabled = await repos.endpoints.listUnreported(
        "disabled",
        new Date(now.getTime() - DISABLED_GRACE_MS),
        REPORT_PAGE,
      );
      for (const e of disabled) if (await reportDisabled(e.id)) n++;
      return n;
    },
  };
}

export type OperationalEvents = ReturnType<typeof operationalEvents>;
