import { HEADER_VALUE_MASK } from "../domain/custom-headers.ts";
import type { Delivery } from "../domain/delivery.ts";
import { activeSecrets, type Endpoint } from "../domain/endpoint.ts";
import type { Envelope } from "../domain/envelope.ts";
import { notFound } from "../domain/errors.ts";
import { signedHeaders } from "../domain/signature-scheme.ts";
import { unixSeconds } from "../domain/time.ts";
import type { AppDeps } from "./deps.ts";
import type { DeliveryInsights } from "./ports/console.ts";
import type { DeliveryFilter } from "./ports/deliveries.ts";
import type { Page, PageRequest, Scope } from "./ports/paging.ts";

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Most attempts read for the 24-hour health and chart; beyond it the figures cover the newest ones. */
export const HEALTH_SAMPLE_LIMIT = 20_000;

export interface EndpointHealth {
  endpoint: Endpoint;
  attempts24h: number;
  succeeded24h: number;
  failed24h: number;
  /** Successes over finished attempts in the last 24 h; null without any. */
  successRate: number | null;
  lastSuccessAt: Date | null;
}

export interface OutcomeBucket {
  start: Date;
  succeeded: number;
  failed: number;
  other: number;
}

export interface Overview {
  endpoints: EndpointHealth[];
  dueBacklog: number;
  oldestDueAgeSeconds: number;
  buckets: OutcomeBucket[];
  /** True when the 24-hour figures were cut at HEALTH_SAMPLE_LIMIT attempts. */
  sampled: boolean;
}

/** The request an attempt sent, rebuilt: the same bytes and headers, signatures recomputed. */
export interface SentRequest {
  url: string;
  headers: [string, string][];
  body: string;
  /**
   * The scheme and custom header names are those the record kept for the attempt; false on a record
   * written before they were kept, whose request is rebuilt with the endpoint's current ones.
   */
  asRecorded: boolean;
}

/** Where a console may look: the whole project, or (portal) some of its endpoints. */
export interface Reach {
  scope: Scope;
  webhookIds: readonly string[] | null;
}

/** The read side of the console: health, charts, lists across endpoints, the live feed. */
export function consoleInsights(deps: AppDeps & { insights: DeliveryInsights; version: string }) {
  const { repos, clock, insights, cipher } = deps;
  const allowed = (reach: Reach, webhookId: string) =>
    reach.webhookIds === null || reach.webhookIds.includes(webhookId);

  return {
    allowed,

    async overview(reach: Reach, endpoints: Endpoint[]): Promise<Overview> {
      const now = clock.now();
      const since = new Date(now.getTime() - DAY_MS);
      const attempts = await insights.attemptsSince(reach.scope, since, HEALTH_SAMPLE_LIMIT);
      const shown = endpoints.filter((e) => allowed(reach, e.id));
      const last = await insights.lastSuccess(
        reach.scope,
        shown.map((e) => e.id),
      );
      // 24 hourly buckets, the last one the current hour.
      const first = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - 23 * HOUR_MS;
      const buckets: OutcomeBucket[] = Array.from({ length: 24 }, (_, i) => ({
        start: new Date(first + i * HOUR_MS),
        succeeded: 0,
        failed: 0,
        other: 0,
      }));
      const perEndpoint = new Map<string, { n: number; ok: number; bad: number }>();
      for (const a of attempts) {
        if (!allowed(reach, a.webhookId)) continue;
        const s = perEndpoint.get(a.webhookId) ?? { n: 0, ok: 0, bad: 0 };
        s.n++;
        if (a.status === "succeeded") s.ok++;
        if (a.status === "failed") s.bad++;
        perEndpoint.set(a.webhookId, s);
        const b = buckets[Math.floor((a.attemptedAt.getTime() - first) / HOUR_MS)];
        if (!b) continue;
        if (a.status === "succeeded") b.succeeded++;
        else if (a.status === "failed") b.failed++;
        else b.other++;
      }
      const due = await insights.dueStats(reach.scope, now, reach.webhookIds);
      return {
        endpoints: shown.map((endpoint) => {
          const s = perEndpoint.get(endpoint.id) ?? { n: 0, ok: 0, bad: 0 };
          return {
            endpoint,
            attempts24h: s.n,
            succeeded24h: s.ok,
            failed24h: s.bad,
            successRate: s.ok + s.bad > 0 ? s.ok / (s.ok + s.bad) : null,
            lastSuccessAt: last.get(endpoint.id) ?? null,
          };
        }),
        dueBacklog: due.count,
        oldestDueAgeSeconds: due.oldestScheduledAt
          ? Math.max(0, (now.getTime() - due.oldestScheduledAt.getTime()) / 1000)
          : 0,
        buckets,
        sampled: attempts.length >= HEALTH_SAMPLE_LIMIT,
      };
    },

    /** Deliveries across the endpoints the reach allows (one endpoint's list goes through deliveryUseCases). */
    list(reach: Reach, filter: DeliveryFilter, page: PageRequest): Promise<Page<Delivery>> {
      return insights.list(reach.scope, reach.webhookIds, filter, page);
    },

    /** Every attempt of one event to one endpoint, first attempt first. */
    async timeline(reach: Reach, d: Delivery): Promise<Delivery[]> {
      const page = await insights.list(
        reach.scope,
        [d.webhookId],
        { eventId: d.eventId },
        { limit: 100, cursor: null },
      );
      return page.data.sort((a, b) => a.attempt - b.attempt);
    },

    /** The latest attempt of an event to each endpoint it was fanned out to (that the reach allows). */
    async fanout(reach: Reach, eventId: string): Promise<Delivery[]> {
      const page = await insights.list(
        reach.scope,
        reach.webhookIds,
        { eventId },
        { limit: 100, cursor: null },
      );
      const latest = new Map<string, Delivery>();
      for (const d of page.data) {
        const seen = latest.get(d.webhookId);
        if (!seen || d.attempt > seen.attempt) latest.set(d.webhookId, d);
      }
      return [...latest.values()];
    },

    /** The envelope of an event of the scope, as stored (and sent). */
    async envelope(scope: Scope, eventId: string): Promise<{ envelope: Envelope; body: string }> {
      const event = await repos.events.get(scope, eventId);
      if (!event) throw notFound("The event");
      return { envelope: JSON.parse(event.body) as Envelope, body: event.body };
    },

    /**
     * The request an attempt sent: the stored body and the headers. The signature is recomputed, under
     * the scheme the attempt used (the endpoint's current one on a record that did not keep it), with its secrets that were active at the attempt (never shown themselves);
     * custom headers are listed with their values masked. Null before the attempt was made or once the
     * event or endpoint is gone.
     */
    async sentRequest(scope: Scope, d: Delivery): Promise<SentRequest | null> {
      if (!d.attemptedAt) return null;
      const [event, endpoint] = await Promise.all([
        repos.events.get(scope, d.eventId),
        repos.endpoints.get(scope, d.webhookId),
      ]);
      if (!event || !endpoint) return null;
      const timestamp = unixSeconds(d.attemptedAt);
      const secrets = await Promise.all(
        activeSecrets(endpoint.secrets, d.attemptedAt).map((s) => cipher.open(s.sealed)),
      );
      // A record keeps the scheme and header names its send used; an older one does not, and the
      // endpoint's current ones stand in (the page says so).
      const asRecorded = d.signatureScheme !== null && d.headerNames !== null;
      const scheme = d.signatureScheme ?? endpoint.signatureScheme;
      const headerNames = d.headerNames ?? endpoint.headers.map((h) => h.name);
      const signed = await signedHeaders({
        scheme,
        eventId: d.eventId,
        timestamp,
        body: event.body,
        secrets,
      });
      return {
        url: d.url,
        body: event.body,
        headers: [
          ["Content-Type", "application/json"],
          ["User-Agent", `Herald/${deps.version}`],
          ...signed,
          ...headerNames.map((name): [string, string] => [name, HEADER_VALUE_MASK]),
        ],
        asRecorded,
      };
    },

    /** Deliveries created or attempted since `since`, that the reach allows (the live feed polls this). */
    async changedSince(reach: Reach, since: Date): Promise<Delivery[]> {
      const changed = await insights.changedSince(reach.scope, since, 200);
      return changed.filter((d) => allowed(reach, d.webhookId));
    },
  };
}

export type ConsoleInsights = ReturnType<typeof consoleInsights>;
