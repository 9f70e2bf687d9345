import type { Endpoint } from "../domain/endpoint.ts";
import { DomainError } from "../domain/errors.ts";
import {
  disabledNotice,
  failingKey,
  failingNotice,
  type OperationalNotice,
  recoveredNotice,
} from "../domain/operational.ts";
import { type EventUseCases, MAX_BATCH_EVENTS } from "./events.ts";
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

/**
 * How far another process's clock may be ahead of this one's: a streak younger than HERALD_FAILING_AFTER by
 * less than this may already have been reported by a job elsewhere.
 */
const CLOCK_SKEW_MS = 60_000;

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

  const scopeOf = (n: { tenantId: string; projectId: string }) => ({
    tenantId: n.tenantId,
    projectId: n.projectId,
  });
  const inputOf = (n: OperationalNotice) => ({
    type: n.type,
    data: n.data,
    idempotencyKey: n.key,
    operational: { aboutEndpoint: n.endpointId, fingerprint: n.key },
  });
  /** A notice the catalog refuses is a bug: logged once and dropped, never retried forever. Anything else is thrown. */
  function dropRefused(e: unknown, n: OperationalNotice): void {
    if (!(e instanceof DomainError)) throw e;
    logger.error("an operational event was refused; it is dropped", {
      error: e,
      type: n.type,
      webhook_id: n.endpointId,
    });
  }

  /** Publishes one notice. */
  async function publish(n: OperationalNotice): Promise<void> {
    try {
      await events.publish(scopeOf(n), inputOf(n));
    } catch (e) {
      dropRefused(e, n);
    }
  }

  /**
   * Publishes notices together: a batch publish per project and MAX_BATCH_EVENTS notices, the projects at
   * once, rather than one publish after another (an endpoint that gave up 200 deliveries in one flush made
   * 200 publishes in a row before the flush could write its results). A failure other than a refusal is
   * thrown once every project's batches have run; the caller tries again, and each notice's key replays
   * what was stored.
   */
  async function publishAll(notices: readonly OperationalNotice[]): Promise<void> {
    const byProject = new Map<string, Map<string, OperationalNotice>>();
    for (const n of notices) {
      const project = `${n.tenantId}\u0000${n.projectId}`;
      const keyed = byProject.get(project) ?? new Map<string, OperationalNotice>();
      byProject.set(project, keyed);
      // One occurrence once: two events under one key in one batch would both be new to it.
      if (!keyed.has(n.key)) keyed.set(n.key, n);
    }
    const settled = await Promise.allSettled(
      [...byProject.values()].map(async (keyed) => {
        const all = [...keyed.values()];
        for (let i = 0; i < all.length; i += MAX_BATCH_EVENTS) {
          const batch = all.slice(i, i + MAX_BATCH_EVENTS);
          const outcomes = await events.publishMany(scopeOf(batch[0]!), batch.map(inputOf));
          outcomes.forEach((o, j) => {
            if ("error" in o) dropRefused(o.error, batch[j]!);
          });
        }
      }),
    );
    for (const r of settled) if (r.status === "rejected") throw r.reason;
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

  /** endpoint.recovered of the streak `read` saw, reported since (by a mark `read` predates). */
  const recoveredOfRead = (read: Endpoint) => recoveredNotice({ ...read, failingNotice: read.failingSince });

  /**
   * The mark of `read`'s streak found it over (the mark needs the streak on): a success ended it after the
   * job read it, and the recorder, which read it unreported, owes no endpoint.recovered for it. The
   * endpoint.failing just published is then followed by this one (unless the endpoint was deleted).
   */
  async function recoveredSinceRead(read: Endpoint): Promise<void> {
    const [now] = await repos.endpoints.getMany([read.id]);
    if (!now || now.failingSince?.getTime() === read.failingSince?.getTime()) return;
    const n = recoveredOfRead(read);
    if (n) await publish(n);
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
     * before the streak is cleared). Answers the streaks read unreported that the reporting job may be
     * reporting at this moment, for `cleared` once they are cleared.
     */
    async announce(
      exhausted: readonly OperationalNotice[],
      streaksEnded: readonly string[],
    ): Promise<readonly Endpoint[]> {
      const notices = [...exhausted];
      const unreported: Endpoint[] = [];
      const reportable = clock.now().getTime() - deps.failingAfterMs + CLOCK_SKEW_MS;
      for (const e of streaksEnded.length === 0 ? [] : await repos.endpoints.getMany(streaksEnded)) {
        const n = recoveredNotice(e);
        if (n) notices.push(n);
        else if (e.failingSince && e.failingNotice === null && e.failingSince.getTime() <= reportable)
          unreported.push(e);
      }
      await publishAll(notices);
      return unreported;
    },

    /**
     * After the recorder cleared the streaks `announce` answered: endpoint.recovered of each whose
     * endpoint.failing went out. Either the reporting job reported it in between (its mark, which needs the
     * streak on, landed before the clear), or a job published it and has not marked it: one that died
     * between the two, or one whose mark is about to fail on the cleared streak (it then sends the same
     * endpoint.recovered itself, reportOwed; one key, one event). The event stored under the occurrence's
     * key tells those apart from a streak nobody reported.
     */
    async cleared(unreported: readonly Endpoint[]): Promise<void> {
      if (unreported.length === 0) return;
      const now = new Map((await repos.endpoints.getMany(unreported.map((e) => e.id))).map((e) => [e.id, e]));
      // The streaks' checks at once: one round of reads, not one streak's after another's.
      const owed = await Promise.all(
        unreported.map(async (was) => {
          const since = was.failingSince;
          if (!since) return null;
          const marked = now.get(was.id)?.failingNotice?.getTime() === since.getTime();
          if (!marked && !(await events.storedUnder(scopeOf(was), failingKey(was.id, since)))) return null;
          return recoveredOfRead(was);
        }),
      );
      await publishAll(owed.filter((n) => n !== null));
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
        if (
          e.failingSince &&
          !(await repos.endpoints.markReported(e.id, "failing", e.failingSince)) &&
          notice
        ) {
          await recoveredSinceRead(e);
        }
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
