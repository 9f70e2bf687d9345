import type {
  AttemptSummary,
  ConsoleSessionKind,
  ConsoleSessionRecord,
  ConsoleSessionRepository,
  DeliveryInsights,
} from "../../app/ports/console.ts";
import type { DeliveryFilter } from "../../app/ports/deliveries.ts";
import type { Page, PageRequest, Scope } from "../../app/ports/paging.ts";
import type { Delivery } from "../../domain/delivery.ts";
import { deliveryOf } from "./deliveries.ts";
import { pageOf } from "./paging.ts";

const inScope = (s: Scope, r: Scope) => r.tenantId === s.tenantId && r.projectId === s.projectId;
const copy = <T>(v: T): T => structuredClone(v);

/** In-memory console sessions, codes and portal links: the twin of MongoConsoleSessions. */
export class MemoryConsoleSessions implements ConsoleSessionRepository {
  readonly rows = new Map<string, ConsoleSessionRecord>();

  async insert(record: ConsoleSessionRecord): Promise<void> {
    if (this.rows.has(record.id)) throw new Error(`duplicate console session id ${record.id}`);
    this.rows.set(record.id, copy(record));
  }

  async findByHash(hash: string): Promise<ConsoleSessionRecord | null> {
    for (const r of this.rows.values()) if (r.hash === hash) return copy(r);
    return null;
  }

  async get(id: string): Promise<ConsoleSessionRecord | null> {
    const r = this.rows.get(id);
    return r ? copy(r) : null;
  }

  async consume(hash: string, at: Date): Promise<ConsoleSessionRecord | null> {
    for (const r of this.rows.values()) {
      if (r.hash !== hash) continue;
      if (r.usedAt !== null || r.revokedAt !== null) return null;
      r.usedAt = new Date(at);
      return copy(r);
    }
    return null;
  }

  async revoke(scope: Scope, kind: ConsoleSessionKind, id: string, at: Date): Promise<boolean> {
    const r = this.rows.get(id);
    if (!r || !inScope(scope, r) || r.kind !== kind || r.revokedAt !== null) return false;
    r.revokedAt = new Date(at);
    return true;
  }

  async deleteExpiredBefore(before: Date): Promise<number> {
    let n = 0;
    for (const [id, r] of this.rows) {
      if (r.expiresAt.getTime() < before.getTime()) {
        this.rows.delete(id);
        n++;
      }
    }
    return n;
  }
}

const matches = (d: Delivery, f: DeliveryFilter) =>
  (f.status === undefined || d.status === f.status) &&
  (f.eventType === undefined || d.eventType === f.eventType) &&
  (f.eventId === undefined || d.eventId === f.eventId) &&
  (f.since === undefined || d.createdAt.getTime() >= f.since.getTime()) &&
  (f.until === undefined || d.createdAt.getTime() < f.until.getTime());

const changeTime = (d: Delivery) => Math.max(d.createdAt.getTime(), d.attemptedAt?.getTime() ?? 0);

/**
 * Delivery insights over the memory store's delivery records. It reads them through `deliveries`, a
 * view the composition root gives it, so it does not depend on how the memory store keeps them.
 */
export function createMemoryInsights(deliveries: () => Iterable<Delivery>): DeliveryInsights {
  const all = (scope: Scope) => [...deliveries()].filter((d) => inScope(scope, d));
  return {
    async attemptsSince(scope: Scope, since: Date, limit: number): Promise<AttemptSummary[]> {
      return all(scope)
        .filter((d) => d.attemptedAt !== null && d.attemptedAt.getTime() >= since.getTime())
        .sort((a, b) => b.attemptedAt!.getTime() - a.attemptedAt!.getTime())
        .slice(0, limit)
        .map((d) => ({ webhookId: d.webhookId, status: d.status, attemptedAt: d.attemptedAt! }));
    },

    async lastSuccess(scope: Scope, webhookIds: readonly string[]): Promise<Map<string, Date>> {
      const wanted = new Set(webhookIds);
      const out = new Map<string, Date>();
      for (const d of all(scope)) {
        if (!wanted.has(d.webhookId) || d.status !== "succeeded" || !d.attemptedAt) continue;
        const seen = out.get(d.webhookId);
        if (!seen || seen.getTime() < d.attemptedAt.getTime()) out.set(d.webhookId, d.attemptedAt);
      }
      return out;
    },

    async list(
      scope: Scope,
      webhookIds: readonly string[] | null,
      filter: DeliveryFilter,
      page: PageRequest,
    ): Promise<Page<Delivery>> {
      const items = all(scope).filter(
        (d) => (webhookIds === null || webhookIds.includes(d.webhookId)) && matches(d, filter),
      );
      const p = pageOf(items, page);
      return { data: p.data.map(deliveryOf), next: p.next };
    },

    async changedSince(scope: Scope, since: Date, limit: number): Promise<Delivery[]> {
      return all(scope)
        .filter((d) => changeTime(d) >= since.getTime())
        .sort((a, b) => changeTime(a) - changeTime(b))
        .slice(0, limit)
        .map(deliveryOf);
    },

    async dueStats(scope: Scope, now: Date, webhookIds?: readonly string[] | null) {
      const due = all(scope).filter(
        (d) =>
          d.status === "pending" &&
          d.scheduledAt.getTime() <= now.getTime() &&
          (webhookIds == null || webhookIds.includes(d.webhookId)),
      );
      const oldest = due.reduce<Date | null>(
        (min, d) => (min === null || d.scheduledAt < min ? d.scheduledAt : min),
        null,
      );
      return { count: due.length, oldestScheduledAt: oldest ? new Date(oldest) : null };
    },
  };
}
