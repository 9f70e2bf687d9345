import { buildEnvelope, newEventId } from "../domain/envelope.ts";
import { DomainError, invalid, notFound, type ValidationIssue } from "../domain/errors.ts";
import type { EventType } from "../domain/event-catalog.ts";
import type { EventFilter } from "../domain/event-filter.ts";
import { compileFilter, filterIssues } from "../domain/event-filter-compile.ts";
import { explainMatch, type FilterVerdict } from "../domain/event-filter-match.ts";
import type { AppDeps } from "./deps.ts";
import type { Scope } from "./ports/paging.ts";

/** An event to try a filter on: what POST /events takes. */
export interface CandidateEvent {
  type: string;
  data: unknown;
  resourceId?: string | undefined;
  occurredAt?: string | undefined;
}

/** Whether an endpoint would get a delivery for an event, and why not. */
export interface FilterTestResult extends FilterVerdict {
  /** The event's type is one of the endpoint's. */
  subscribed: boolean;
  /** The filter tried: the one given, else the endpoint's own. */
  filter: EventFilter | null;
}

/** Issues of a use case that checks a part of its input, located below that part. */
function within(prefix: string, error: unknown): unknown {
  if (!(error instanceof DomainError) || error.kind !== "validation_failed") return error;
  const issues: ValidationIssue[] = error.issues.map((i) => ({ ...i, path: `${prefix}.${i.path}` }));
  return invalid(issues, error.message);
}

/** POST /webhooks/{id}/filter-test: a filter tried on an event, nothing stored or sent. */
export function filterTester(deps: Pick<AppDeps, "repos" | "clock" | "ids">) {
  const { repos, clock, ids } = deps;

  const mustGet = async (scope: Scope, id: string) => {
    const e = await repos.endpoints.get(scope, id);
    if (!e) throw notFound("The endpoint");
    return e;
  };

  const checkFilter = (filter: EventFilter, events: readonly EventType[]) => {
    const issues = filterIssues(filter, { events });
    if (issues.length) throw invalid(issues);
  };

  return {
    /**
     * Whether the endpoint would get a delivery for this event: its type subscribed and the filter (the
     * one given, else the endpoint's) matched, with every failed clause. Nothing is stored or sent.
     */
    async testFilter(
      scope: Scope,
      id: string,
      input: { event: CandidateEvent; filter?: EventFilter | null | undefined },
    ): Promise<FilterTestResult> {
      const endpoint = await mustGet(scope, id);
      const filter = input.filter === undefined ? endpoint.filter : input.filter;
      if (input.filter !== undefined && input.filter !== null) checkFilter(input.filter, endpoint.events);
      const { event } = input;
      const occurredAt = event.occurredAt === undefined ? clock.now() : new Date(event.occurredAt);
      let envelope: ReturnType<typeof buildEnvelope>;
      try {
        envelope = buildEnvelope({
          id: newEventId(ids.randomBytes(16)),
          type: event.type,
          data: event.data,
          tenantId: scope.tenantId,
          projectId: scope.projectId,
          occurredAt,
          resourceId: event.resourceId,
        });
      } catch (e) {
        throw within("event", e);
      }
      const subscribed = endpoint.events.includes(envelope.type);
      const reasons: FilterVerdict["reasons"] = subscribed
        ? []
        : [
            {
              path: "event.type",
              message: `${envelope.type} is not one of the endpoint's event types (${endpoint.events.join(", ")})`,
            },
          ];
      // A stored filter that no longer compiles (limits changed since) passes everything, as at fan-out.
      const compiled = filter === null ? null : compileFilter(filter);
      if (!compiled?.ok) return { matches: subscribed, subscribed, filter, reasons };
      const verdict = explainMatch(compiled.clause, envelope);
      return {
        matches: subscribed && verdict.matches,
        subscribed,
        filter,
        reasons: [...reasons, ...verdict.reasons],
      };
    },
  };
}
