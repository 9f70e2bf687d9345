import { type ErasureSubject, erasureSubject, subjectsOf } from "../domain/erasure.ts";
import { notFound } from "../domain/errors.ts";
import type { AppDeps } from "./deps.ts";
import type { ErasureRecord } from "./ports/erasures.ts";
import type { EventSubjects, SubjectMatch } from "./ports/events.ts";
import type { Page, PageRequest, Scope } from "./ports/paging.ts";

/** Events erased per round: each round is a few batched writes, and an interrupted erasure repeats safely. */
export const ERASURE_PAGE = 500;
const BACKFILL_PAGE = 500;

export interface ErasureInput {
  resourceId?: string | undefined;
  recipient?: string | undefined;
}

/**
 * Erasure (ADR 15): removes every stored event of a project about one subject, cancels what is still
 * owed of them, and strips their delivery records of what came from the payload or the receiver.
 * Synchronous and idempotent: when it answers, nothing of the subject is left to send or show; when
 * it fails half-way, repeating it finishes the job.
 */
export function erasureUseCases(deps: AppDeps) {
  const { repos, clock, ids, subjects } = deps;

  let backfilled: Promise<number> | null = null;

  /** Gives events stored before Herald kept their subject fields those fields, page by page. */
  async function backfillOnce(): Promise<number> {
    let n = 0;
    for (;;) {
      const page = await repos.events.listWithoutSubjects(BACKFILL_PAGE);
      if (page.length === 0) return n;
      const filled: EventSubjects[] = [];
      for (const event of page) {
        let about: ReturnType<typeof subjectsOf>;
        try {
          about = subjectsOf(JSON.parse(event.body));
        } catch {
          // Herald wrote every body; one that does not parse still gets a value, so it is not read again.
          about = { resourceId: "", recipient: null };
        }
        filled.push({
          id: event.id,
          resourceId: about.resourceId,
          recipientKey: about.recipient === null ? null : await subjects.recipientKey(event, about.recipient),
        });
      }
      await repos.events.setSubjects(filled);
      n += page.length;
    }
  }

  /** Runs the backfill once per process (again after a failure); every erasure waits for it. */
  function backfill(): Promise<number> {
    backfilled ??= backfillOnce().catch((e: unknown) => {
      backfilled = null;
      throw e;
    });
    return backfilled;
  }

  async function matchOf(scope: Scope, subject: ErasureSubject): Promise<SubjectMatch> {
    return subject.kind === "resource_id"
      ? { resourceId: subject.resourceId }
      : { recipientKey: await subjects.recipientKey(scope, subject.recipient) };
  }

  return {
    backfill,

    async create(scope: Scope, input: ErasureInput): Promise<ErasureRecord> {
      const subject = erasureSubject(input);
      await backfill();
      const match = await matchOf(scope, subject);
      const now = clock.now();
      let events = 0;
      let erased = 0;
      let cancelled = 0;
      for (;;) {
        const page = await repos.events.idsAbout(scope, match, ERASURE_PAGE);
        if (page.length === 0) break;
        // Records first, events last: if this stops half-way, the events are still there to be found
        // by the repeat, and nothing of them has been sent meanwhile (their pending records are cancelled).
        const d = await repos.deliveries.erase(scope, page, now);
        erased += d.erased;
        cancelled += d.cancelled;
        await repos.idempotency.deleteForEvents(page);
        events += await repos.events.deleteMany(scope, page);
        if (page.length < ERASURE_PAGE) break;
      }
      const record: ErasureRecord = {
        id: ids.uuid(),
        tenantId: scope.tenantId,
        projectId: scope.projectId,
        subject: subject.kind,
        resourceId: subject.kind === "resource_id" ? subject.resourceId : null,
        eventsErased: events,
        deliveriesErased: erased,
        deliveriesCancelled: cancelled,
        createdAt: now,
      };
      await repos.erasures.insert(record);
      return record;
    },

    async get(scope: Scope, id: string): Promise<ErasureRecord> {
      const record = await repos.erasures.get(scope, id);
      if (!record) throw notFound("The erasure");
      return record;
    },

    list(scope: Scope, page: PageRequest): Promise<Page<ErasureRecord>> {
      return repos.erasures.list(scope, page);
    },
  };
}

export type ErasureUseCases = ReturnType<typeof erasureUseCases>;
