import { candidateWindow, pickWithinRoom } from "../../app/claim-room.ts";
import type {
  AttemptResult,
  ClaimRequest,
  DeliveryFilter,
  DeliveryRepository,
  LeasedDelivery,
} from "../../app/ports/deliveries.ts";
import type { EndpointFilter, EndpointPatch, EndpointRepository } from "../../app/ports/endpoints.ts";
import type { EventRepository, StoredEvent } from "../../app/ports/events.ts";
import type { Page, PageRequest, Scope } from "../../app/ports/paging.ts";
import type { Repositories } from "../../app/ports/store.ts";
import type {
  IdempotencyRecord,
  IdempotencyRepository,
  TokenRecord,
  TokenRepository,
} from "../../app/ports/tokens.ts";
import type { Delivery } from "../../domain/delivery.ts";
import type { DisabledReason, Endpoint } from "../../domain/endpoint.ts";
import type { EventType } from "../../domain/event-catalog.ts";
import { pageOf } from "./paging.ts";

const inScope = (s: Scope, r: Scope) => r.tenantId === s.tenantId && r.projectId === s.projectId;
// Records are copied in and out, so callers cannot change stored state by holding a reference.
const copy = <T>(v: T): T => structuredClone(v);
// Events and deliveries are flat records whose Dates are never changed in place (every change assigns a
// new Date), so a shallow copy isolates them as well, at a fraction of the cost on the delivery hot path.
const flat = <T extends object>(v: T): T => ({ ...v });
// An endpoint's only nested parts are its event list and its secrets; copying those by hand is what
// structuredClone would do, without its cost on every publish (subscribers) and every claim.
const endpointCopy = (e: Endpoint): Endpoint => ({
  ...e,
  events: [...e.events],
  secrets: e.secrets.map((s) => ({ ...s })),
});

class MemoryEndpoints implements EndpointRepository {
  readonly rows = new Map<string, Endpoint>();

  async insert(endpoint: Endpoint): Promise<void> {
    if (this.rows.has(endpoint.id)) throw new Error(`duplicate endpoint id ${endpoint.id}`);
    this.rows.set(endpoint.id, endpointCopy(endpoint));
  }

  async get(scope: Scope, id: string): Promise<Endpoint | null> {
    const e = this.rows.get(id);
    return e && inScope(scope, e) ? endpointCopy(e) : null;
  }

  async getMany(ids: readonly string[]): Promise<Endpoint[]> {
    return ids.flatMap((id) => {
      const e = this.rows.get(id);
      return e ? [endpointCopy(e)] : [];
    });
  }

  async list(scope: Scope, filter: EndpointFilter, page: PageRequest): Promise<Page<Endpoint>> {
    const items = [...this.rows.values()].filter(
      (e) =>
        inScope(scope, e) &&
        (filter.enabled === undefined || e.enabled === filter.enabled) &&
        (filter.event === undefined || e.events.includes(filter.event)),
    );
    const p = pageOf(items, page);
    return { data: p.data.map(endpointCopy), next: p.next };
  }

  async listSubscribed(scope: Scope, type: EventType): Promise<Endpoint[]> {
    return [...this.rows.values()]
      .filter((e) => inScope(scope, e) && e.events.includes(type))
      .map(endpointCopy);
  }

  async update(scope: Scope, id: string, patch: EndpointPatch): Promise<Endpoint | null> {
    const e = this.rows.get(id);
    if (!e || !inScope(scope, e)) return null;
    const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
    const next = { ...e, ...copy(defined) } as Endpoint;
    this.rows.set(id, next);
    return endpointCopy(next);
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    const e = this.rows.get(id);
    if (!e || !inScope(scope, e)) return false;
    return this.rows.delete(id);
  }

  async markSucceeded(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const e = this.rows.get(id);
      if (e) e.failingSince = null;
    }
  }

  async markFailing(ids: readonly string[], at: Date): Promise<void> {
    for (const id of ids) {
      const e = this.rows.get(id);
      if (e && e.failingSince === null) e.failingSince = new Date(at);
    }
  }

  async listFailingSince(before: Date, limit: number): Promise<Endpoint[]> {
    return [...this.rows.values()]
      .filter((e) => e.enabled && e.failingSince !== null && e.failingSince.getTime() <= before.getTime())
      .slice(0, limit)
      .map(copy);
  }

  async disable(id: string, reason: DisabledReason, at: Date): Promise<boolean> {
    const e = this.rows.get(id);
    if (!e?.enabled) return false;
    e.enabled = false;
    e.disabledReason = reason;
    e.updatedAt = new Date(at);
    return true;
  }
}

class MemoryEvents implements EventRepository {
  readonly rows = new Map<string, StoredEvent>();

  async insert(event: StoredEvent): Promise<boolean> {
    if (this.rows.has(event.id)) return false;
    this.rows.set(event.id, flat(event));
    return true;
  }

  async get(scope: Scope, id: string): Promise<StoredEvent | null> {
    const e = this.rows.get(id);
    return e && inScope(scope, e) ? flat(e) : null;
  }

  async getMany(ids: readonly string[]): Promise<StoredEvent[]> {
    return ids.flatMap((id) => {
      const e = this.rows.get(id);
      return e ? [flat(e)] : [];
    });
  }

  async markFannedOut(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const e = this.rows.get(id);
      if (e) e.fanoutPending = false;
    }
  }

  async listFanoutPending(before: Date, limit: number): Promise<StoredEvent[]> {
    return [...this.rows.values()]
      .filter((e) => e.fanoutPending && e.createdAt.getTime() <= before.getTime())
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
      .slice(0, limit)
      .map(copy);
  }

  async listCreatedBetween(
    scope: Scope,
    since: Date,
    until: Date,
    limit: number,
    after?: string,
  ): Promise<StoredEvent[]> {
    const window = [...this.rows.values()]
      .filter(
        (e) =>
          inScope(scope, e) &&
          e.createdAt.getTime() >= since.getTime() &&
          e.createdAt.getTime() < until.getTime(),
      )
      .sort(
        (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );
    // An `after` outside the window does not narrow the list (as in MongoDB).
    const pivot = after === undefined ? undefined : window.find((x) => x.id === after);
    const rest = pivot
      ? window.filter((e) => {
          const t = e.createdAt.getTime() - pivot.createdAt.getTime();
          return t > 0 || (t === 0 && e.id > pivot.id);
        })
      : window;
    return rest.slice(0, limit).map(flat);
  }

  async deleteCreatedBefore(before: Date): Promise<number> {
    let n = 0;
    for (const [id, e] of this.rows) {
      if (e.createdAt.getTime() < before.getTime()) {
        this.rows.delete(id);
        n++;
      }
    }
    return n;
  }
}

interface DeliveryRow extends Delivery {
  leaseOwner: string | null;
  /** Epoch milliseconds; 0 when no lease is held (never taken, given back or finished). */
  leaseExpiresAt: number;
}

// Rows and the copies handed out are built field by field: one fixed shape for every delivery keeps
// V8's fast paths on the hottest objects, where spreads and rest patterns on a 20-field record do not.
/** A plain copy of a delivery record (no lease fields), in the one fixed shape the store hands out. */
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
});

const rowOf = (d: Delivery): DeliveryRow => {
  // Every row gains the same two fields in the same order, so all rows still share one shape.
  const row = deliveryOf(d) as DeliveryRow;
  row.leaseOwner = null;
  row.leaseExpiresAt = 0;
  return row;
};

class MemoryDeliveries implements DeliveryRepository {
  readonly rows = new Map<string, DeliveryRow>();
  /** Ids of pending rows by endpoint, in insertion order: claims look only at these. */
  private readonly pending = new Map<string, Set<string>>();

  private addPending(d: Delivery) {
    let q = this.pending.get(d.webhookId);
    if (!q) {
      q = new Set();
      this.pending.set(d.webhookId, q);
    }
    q.add(d.id);
  }

  private dropPending(d: Delivery) {
    const q = this.pending.get(d.webhookId);
    q?.delete(d.id);
    if (q?.size === 0) this.pending.delete(d.webhookId);
  }
  private claims = 0;

  async insertMany(deliveries: readonly Delivery[]): Promise<void> {
    for (const d of deliveries) {
      if (this.rows.has(d.id)) continue;
      this.rows.set(d.id, rowOf(d));
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

  async cancelPending(webhookId: string, at: Date): Promise<number> {
    let n = 0;
    for (const d of this.rows.values()) {
      if (d.webhookId === webhookId && d.status === "pending") {
        this.dropPending(d);
        d.status = "cancelled";
        d.attemptedAt = null;
        d.nextAttemptAt = null;
        d.leaseOwner = null;
        d.leaseExpiresAt = 0;
        void at;
        n++;
      }
    }
    return n;
  }

  async claimDue(r: ClaimRequest): Promise<LeasedDelivery[]> {
    const excluded = new Set(r.excludeWebhookIds);
    // Per endpoint with room, its pending rows in insertion order (close to schedule order), read only
    // as far as that room and the candidate window need: a claim costs what it can take, not the backlog.
    const window = Math.max(candidateWindow(r), 256);
    const cap = r.perEndpointLimit ?? window;
    const due: DeliveryRow[] = [];
    for (const [webhookId, queue] of this.pending) {
      if (excluded.has(webhookId)) continue;
      const room = Math.min(cap - (r.busy?.[webhookId] ?? 0), window - due.length);
      let found = 0;
      for (const id of queue) {
        if (found >= room) break;
        const d = this.rows.get(id);
        if (
          d &&
          d.status === "pending" &&
          d.scheduledAt.getTime() <= r.now.getTime() &&
          d.leaseExpiresAt <= r.now.getTime()
        ) {
          due.push(d);
          found++;
        }
      }
      if (due.length >= window) break;
    }
    due.sort((a, b) => a.scheduledAt.getTime() - b.scheduledAt.getTime());
    const chosen = pickWithinRoom(due, r);
    const expires = r.now.getTime() + r.leaseMs;
    // Each claim gets its own token (as in MongoDB), so a worker whose lease expired and was re-taken,
    // even by the same owner, can no longer finalise the record.
    const token = `${r.owner}:${++this.claims}`;
    return chosen.map((d) => {
      // A lease that ran out (rather than one given back, which resets it to 0) means its owner died.
      const recovered = d.leaseOwner !== null && d.leaseExpiresAt > 0;
      d.leaseOwner = token;
      d.leaseExpiresAt = expires;
      const leased = deliveryOf(d) as LeasedDelivery;
      leased.leaseOwner = token;
      leased.leaseExpiresAt = new Date(expires);
      leased.recovered = recovered;
      return leased;
    });
  }

  async complete(results: readonly AttemptResult[]): Promise<void> {
    await this.insertMany(results.flatMap((r) => (r.next ? [r.next] : [])));
    for (const r of results) {
      const d = this.rows.get(r.id);
      if (d?.status !== "pending" || d.leaseOwner !== r.leaseOwner) continue;
      this.dropPending(d);
      d.status = r.status;
      d.responseStatus = r.responseStatus;
      d.responseBody = r.responseBody;
      d.error = r.error;
      d.durationMs = r.durationMs;
      d.attemptedAt = r.attemptedAt ? new Date(r.attemptedAt) : null;
      d.nextAttemptAt = r.nextAttemptAt ? new Date(r.nextAttemptAt) : null;
      d.leaseOwner = null;
      d.leaseExpiresAt = 0;
    }
  }

  async release(owner: string, ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const d = this.rows.get(id);
      // `owner` is a claim token, or the owner that claimed (all of its claims).
      const held = d?.leaseOwner === owner || d?.leaseOwner?.startsWith(`${owner}:`);
      if (d && d.status === "pending" && held) {
        d.leaseOwner = null;
        d.leaseExpiresAt = 0;
      }
    }
  }

  async dueStats(now: Date): Promise<{ count: number; oldestScheduledAt: Date | null }> {
    let count = 0;
    let oldest: Date | null = null;
    for (const d of this.rows.values()) {
      if (d.status !== "pending" || d.scheduledAt.getTime() > now.getTime()) continue;
      count++;
      if (!oldest || d.scheduledAt.getTime() < oldest.getTime()) oldest = d.scheduledAt;
    }
    return { count, oldestScheduledAt: oldest ? new Date(oldest) : null };
  }

  async nextDueAt(): Promise<Date | null> {
    let next: Date | null = null;
    for (const d of this.rows.values()) {
      if (d.status === "pending" && (!next || d.scheduledAt.getTime() < next.getTime())) next = d.scheduledAt;
    }
    return next ? new Date(next) : null;
  }

  async deleteCreatedBefore(before: Date): Promise<number> {
    let n = 0;
    for (const [id, d] of this.rows) {
      if (d.createdAt.getTime() < before.getTime() && d.status !== "pending") {
        this.rows.delete(id);
        n++;
      }
    }
    return n;
  }
}

class MemoryTokens implements TokenRepository {
  readonly rows = new Map<string, TokenRecord>();

  async insert(token: TokenRecord): Promise<void> {
    this.rows.set(token.id, flat(token));
  }

  async findByHash(hash: string): Promise<TokenRecord | null> {
    for (const t of this.rows.values()) if (t.hash === hash) return flat(t);
    return null;
  }

  async list(): Promise<TokenRecord[]> {
    return [...this.rows.values()].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()).map(copy);
  }

  async revoke(id: string, at: Date): Promise<boolean> {
    const t = this.rows.get(id);
    if (!t || t.revokedAt) return false;
    t.revokedAt = new Date(at);
    return true;
  }

  async count(): Promise<number> {
    return this.rows.size;
  }
}

class MemoryIdempotency implements IdempotencyRepository {
  readonly rows = new Map<string, IdempotencyRecord>();

  async reserve(record: IdempotencyRecord, notBefore: Date): Promise<IdempotencyRecord> {
    const held = this.rows.get(record.scopeKey);
    if (held && held.createdAt.getTime() >= notBefore.getTime()) return copy(held);
    this.rows.set(record.scopeKey, copy(record));
    return copy(record);
  }

  async deleteCreatedBefore(before: Date): Promise<number> {
    let n = 0;
    for (const [key, r] of this.rows) {
      if (r.createdAt.getTime() < before.getTime()) {
        this.rows.delete(key);
        n++;
      }
    }
    return n;
  }
}

/** In-memory repositories: the twin of the MongoDB adapter, for tests and the benchmark. */
export function createMemoryRepositories(): Repositories & {
  endpoints: MemoryEndpoints;
  events: MemoryEvents;
  deliveries: MemoryDeliveries;
} {
  let down = false;
  return {
    endpoints: new MemoryEndpoints(),
    events: new MemoryEvents(),
    deliveries: new MemoryDeliveries(),
    tokens: new MemoryTokens(),
    idempotency: new MemoryIdempotency(),
    async ping() {
      if (down) throw new Error("memory store closed");
    },
    async close() {
      down = true;
    },
  };
}
