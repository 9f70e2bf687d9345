import type { EventRepository, StoredEvent } from "../../app/ports/events.ts";
import type { Scope } from "../../app/ports/paging.ts";
import { copy, flat, inScope } from "./copies.ts";

export class MemoryEvents implements EventRepository {
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
