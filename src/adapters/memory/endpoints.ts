import type { EndpointFilter, EndpointPatch, EndpointRepository } from "../../app/ports/endpoints.ts";
import type { Page, PageRequest, Scope } from "../../app/ports/paging.ts";
import type { DisabledReason, Endpoint } from "../../domain/endpoint.ts";
import type { EventType } from "../../domain/event-catalog.ts";
import { copy, inScope } from "./copies.ts";
import { pageOf } from "./paging.ts";

// An endpoint's only nested parts are its event list, its secrets and its headers; copying those by hand is what
// structuredClone would do, without its cost on every publish (subscribers) and every claim.
const endpointCopy = (e: Endpoint): Endpoint => ({
  ...e,
  events: [...e.events],
  secrets: e.secrets.map((s) => ({ ...s })),
  headers: e.headers.map((h) => ({ ...h })),
  filter: e.filter === null ? null : structuredClone(e.filter),
  rateLimit: e.rateLimit && { ...e.rateLimit },
  clientCertificate: e.clientCertificate && { ...e.clientCertificate },
  destination: e.destination && structuredClone(e.destination),
});

export class MemoryEndpoints implements EndpointRepository {
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
      if (e && e.failingSince === null) {
        e.failingSince = new Date(at);
        e.failingNotice = null;
      }
    }
  }

  async listUnreported(kind: "failing" | "disabled", before: Date, limit: number): Promise<Endpoint[]> {
    const t = before.getTime();
    return [...this.rows.values()]
      .filter((e) =>
        kind === "failing"
          ? e.enabled && e.failingSince !== null && e.failingSince.getTime() <= t && e.failingNotice === null
          : !e.enabled && e.disabledAt !== null && e.disabledAt.getTime() <= t && e.disabledNotice === null,
      )
      .sort((a, b) =>
        kind === "failing"
          ? a.failingSince!.getTime() - b.failingSince!.getTime()
          : a.disabledAt!.getTime() - b.disabledAt!.getTime(),
      )
      .slice(0, Math.max(0, limit))
      .map(endpointCopy);
  }

  async markReported(id: string, kind: "failing" | "disabled", at: Date): Promise<boolean> {
    const e = this.rows.get(id);
    const occurrence = kind === "failing" ? e?.failingSince : e?.disabledAt;
    if (!e || !occurrence || occurrence.getTime() !== at.getTime()) return false;
    if (kind === "failing") e.failingNotice = new Date(at);
    else e.disabledNotice = new Date(at);
    return true;
  }

  async listFailingSince(before: Date, limit: number): Promise<Endpoint[]> {
    return [...this.rows.values()]
      .filter((e) => e.enabled && e.failingSince !== null && e.failingSince.getTime() <= before.getTime())
      .sort((a, b) => a.failingSince!.getTime() - b.failingSince!.getTime())
      .slice(0, Math.max(0, limit))
      .map(copy);
  }

  async listFifo(): Promise<string[]> {
    return [...this.rows.values()].filter((e) => e.ordering === "fifo").map((e) => e.id);
  }

  async disable(id: string, reason: DisabledReason, at: Date): Promise<boolean> {
    const e = this.rows.get(id);
    if (!e?.enabled) return false;
    e.enabled = false;
    e.disabledReason = reason;
    e.disabledAt = new Date(at);
    e.disabledNotice = null;
    e.updatedAt = new Date(at);
    return true;
  }
}
