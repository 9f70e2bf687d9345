import type {
  AttemptResult,
  DeliveryFilter,
  DeliveryRepository,
  DueRequest,
} from "../../app/ports/deliveries.ts";
import type { Page, PageRequest, Scope } from "../../app/ports/paging.ts";
import { acceptanceOrder, type Delivery } from "../../domain/delivery.ts";
import { shardOf } from "../../domain/shards.ts";
import { inScope } from "./copies.ts";
import { pageOf } from "./paging.ts";

// Records and the copies handed out are built field by field: one fixed shape for every delivery keeps
// V8's fast paths on the hottest objects, where spreads and rest patterns on a 20-field record do not.
/** A plain copy of a delivery record, in the one fixed shape the memory store hands out. */
export const deliveryOf = (d: Delivery): Delivery => ({
  id: d.id,
  tenantId: d.tenantId,
  projectId: d.projectId,
  webhookId: d.webhookId,
  eventId: d.eventId,
  eventType: d.eventType,
  attempt: d.attempt,
  trigger: d.trigger,
  status: d.status,
  url: d.url,
  responseStatus: d.responseStatus,
  responseBody: d.responseBody,
  error: d.error,
  durationMs: d.durationMs,
  scheduledAt: d.scheduledAt,
  attemptedAt: d.attemptedAt,
  nextAttemptAt: d.nextAttemptAt,
  createdAt: d.createdAt,
  erasedAt: d.erasedAt,
  sequence: d.sequence,
  signatureScheme: d.signatureScheme,
  headerNames: d.headerNames ? [...d.headerNames] : null,
  // Present only when there is one (as every store reads it back).
  ...(d.receipt ? { receipt: { ...d.receipt } } : {}),
});

/** Cancelled because another attempt of its pair succeeded (ADR 19); a send then in flight still records. */
const superseded = (d: Delivery) => d.status === "cancelled" && d.error === "superseded";

/** Pending deliveries of one endpoint, in insertion order (close to schedule order). */
interface Queue {
  shard: number;
  ids: Set<string>;
}

export class MemoryDeliveries implements DeliveryRepository {
  readonly rows = new Map<string, Delivery>();
  /** Ids of pending rows by endpoint: a claim looks only at these. */
  private readonly pending = new Map<string, Queue>();

  private addPending(d: Delivery) {
    let q = this.pending.get(d.webhookId);
    if (!q) {
      q = { shard: shardOf(d.webhookId), ids: new Set() };
      this.pending.set(d.webhookId, q);
    }
    q.ids.add(d.id);
  }

  private dropPending(d: Delivery) {
    const q = this.pending.get(d.webhookId);
    q?.ids.delete(d.id);
    if (q?.ids.size === 0) this.pending.delete(d.webhookId);
  }

  async insertMany(deliveries: readonly Delivery[]): Promise<void> {
    for (const d of deliveries) {
      if (this.rows.has(d.id)) continue;
      this.rows.set(d.id, deliveryOf(d));
      if (d.status === "pending") this.addPending(d);
    }
  }

  async get(scope: Scope, id: string): Promise<Delivery | null> {
    const d = this.rows.get(id);
    return d && inScope(scope, d) ? deliveryOf(d) : null;
  }

  async list(scope: Scope, webhookId: string, f: DeliveryFilter, page: PageRequest): Promise<Page<Delivery>> {
    const items = [...this.rows.values()].filter(
      (d) =>
        inScope(scope, d) &&
        d.webhookId === webhookId &&
        (f.status === undefined || d.status === f.status) &&
        (f.eventType === undefined || d.eventType === f.eventType) &&
        (f.eventId === undefined || d.eventId === f.eventId) &&
        (f.since === undefined || d.createdAt.getTime() >= f.since.getTime()) &&
        (f.until === undefined || d.createdAt.getTime() < f.until.getTime()),
    );
    const p = pageOf(items, page);
    return { data: p.data.map(deliveryOf), next: p.next };
  }

  async maxAttempts(pairs: readonly { eventId: string; webhookId: string }[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const wanted = new Set(pairs.map((p) => `${p.eventId}/${p.webhookId}`));
    for (const key of wanted) out.set(key, 0);
    for (const d of this.rows.values()) {
      const key = `${d.eventId}/${d.webhookId}`;
      if (wanted.has(key)) out.set(key, Math.max(out.get(key) ?? 0, d.attempt));
    }
    return out;
  }

  async latestForEvents(webhookId: string, eventIds: readonly string[]): Promise<Map<string, Delivery>> {
    const wanted = new Set(eventIds);
    const out = new Map<string, Delivery>();
    for (const d of this.rows.values()) {
      if (d.webhookId !== webhookId || !wanted.has(d.eventId)) continue;
      const held = out.get(d.eventId);
      if (!held || d.attempt > held.attempt) out.set(d.eventId, deliveryOf(d));
    }
    return out;
  }

  async cancelPending(scope: Scope, webhookId: string): Promise<number> {
    let n = 0;
    for (const id of [...(this.pending.get(webhookId)?.ids ?? [])]) {
      const d = this.rows.get(id);
      if (d?.status !== "pending" || !inScope(scope, d)) continue;
      this.dropPending(d);
      d.status = "cancelled";
      d.attemptedAt = null;
      d.nextAttemptAt = null;
      n++;
    }
    return n;
  }

  async due(r: DueRequest): Promise<Delivery[]> {
    if (r.limit <= 0) return [];
    const shards = r.shards === null ? null : new Set(r.shards);
    const excludedEndpoints = new Set(r.excludeWebhookIds);
    const excludedIds = new Set(r.excludeIds);
    const perEndpoint = Math.min(r.perEndpointLimit ?? r.limit, r.limit);
    const now = r.now.getTime();
    // Per endpoint, its pending rows in insertion order, read only as far as the caller can use: a
    // claim costs what it can take, not the backlog.
    const due: Delivery[] = [];
    for (const [webhookId, q] of this.pending) {
      if (excludedEndpoints.has(webhookId) || (shards !== null && !shards.has(q.shard))) continue;
      let found = 0;
      for (const id of q.ids) {
        if (found >= perEndpoint) break;
        if (excludedIds.has(id)) continue;
        const d = this.rows.get(id);
        if (d && d.status === "pending" && d.scheduledAt.getTime() <= now) {
          due.push(d);
          found++;
        }
      }
      if (due.length >= r.limit * 4) break;
    }
    due.sort((a, b) => a.scheduledAt.getTime() - b.scheduledAt.getTime());
    return due.slice(0, r.limit).map(deliveryOf);
  }

  async postpone(ids: readonly string[], until: Date): Promise<void> {
    for (const id of ids) {
      const d = this.rows.get(id);
      if (d?.status === "pending") d.scheduledAt = new Date(until);
    }
  }

  async head(webhookId: string): Promise<Delivery | null> {
    let first: Delivery | null = null;
    for (const id of this.pending.get(webhookId)?.ids ?? []) {
      const d = this.rows.get(id);
      if (d?.status !== "pending") continue;
      if (!first || acceptanceOrder(d, first) < 0) first = d;
    }
    return first ? deliveryOf(first) : null;
  }

  async countPending(webhookIds: readonly string[]): Promise<Map<string, number>> {
    return new Map(webhookIds.map((id) => [id, this.pending.get(id)?.ids.size ?? 0]));
  }

  async record(results: readonly AttemptResult[]): Promise<void> {
    // A follow-up only for a result that is written: one for a record another owner finished meanwhile
    // (this process lost the shard while its send was on its way) would send the event again.
    const writable = (d: Delivery | undefined): d is Delivery =>
      d !== undefined && (d.status === "pending" || superseded(d));
    await this.insertMany(results.flatMap((r) => (r.next && writable(this.rows.get(r.id)) ? [r.next] : [])));
    for (const r of results) {
      const d = this.rows.get(r.id);
      if (!writable(d)) continue;
      this.dropPending(d);
      d.status = r.status;
      d.responseStatus = r.responseStatus;
      d.responseBody = r.responseBody;
      d.error = r.error;
      d.durationMs = r.durationMs;
      d.attemptedAt = r.attemptedAt ? new Date(r.attemptedAt) : null;
      d.nextAttemptAt = r.nextAttemptAt ? new Date(r.nextAttemptAt) : null;
      d.signatureScheme = r.signatureScheme ?? null;
      d.headerNames = r.headerNames ? [...r.headerNames] : null;
      if (r.receipt) d.receipt = { ...r.receipt };
      else delete d.receipt;
    }
    const own = new Set(results.map((r) => r.id));
    for (const r of results) {
      if (!r.acknowledges) continue;
      const { eventId, webhookId } = r.acknowledges;
      for (const id of [...(this.pending.get(webhookId)?.ids ?? [])]) {
        const d = this.rows.get(id);
        if (d?.status !== "pending" || d.eventId !== eventId || d.trigger !== "automatic" || own.has(id))
          continue;
        this.dropPending(d);
        d.status = "cancelled";
        d.error = "superseded";
        d.nextAttemptAt = null;
      }
    }
  }

  async dueStats(now: Date): Promise<{ count: number; oldestScheduledAt: Date | null }> {
    let count = 0;
    let oldest: Date | null = null;
    for (const q of this.pending.values()) {
      for (const id of q.ids) {
        const d = this.rows.get(id);
        if (d?.status !== "pending" || d.scheduledAt.getTime() > now.getTime()) continue;
        count++;
        if (!oldest || d.scheduledAt.getTime() < oldest.getTime()) oldest = d.scheduledAt;
      }
    }
    return { count, oldestScheduledAt: oldest ? new Date(oldest) : null };
  }

  async deleteCreatedBefore(before: Date, scope?: Scope): Promise<number> {
    let n = 0;
    for (const [id, d] of this.rows) {
      if (
        d.createdAt.getTime() < before.getTime() &&
        d.status !== "pending" &&
        (!scope || inScope(scope, d))
      ) {
        this.rows.delete(id);
        n++;
      }
    }
    return n;
  }

  async erase(
    scope: Scope,
    eventIds: readonly string[],
    at: Date,
  ): Promise<{ erased: number; cancelled: number }> {
    const events = new Set(eventIds);
    let erased = 0;
    let cancelled = 0;
    for (const d of this.rows.values()) {
      if (!events.has(d.eventId) || !inScope(scope, d) || d.erasedAt !== null) continue;
      if (d.status === "pending") {
        this.dropPending(d);
        d.status = "cancelled";
        d.attemptedAt = null;
        d.nextAttemptAt = null;
        cancelled++;
      }
      d.responseBody = null;
      d.erasedAt = new Date(at);
      erased++;
    }
    return { erased, cancelled };
  }
}
