import type { EventRepository, EventSubjects, StoredEvent, SubjectMatch } from "../../app/ports/events.ts";
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

  async deleteCreatedBefore(before: Date, scope?: Scope): Promise<number> {
    let n = 0;
    for (const [id, e] of this.rows) {
      if (e.createdAt.getTime() < before.getTime() && (!scope || inScope(scope, e))) {
        this.rows.delete(id);
        n++;
      }
    }
    return n;
  }

  async idsAbout(scope: Scope, subject: SubjectMatch, limit: number): Promise<string[]> {
    const out: string[] = [];
    for (const e of this.rows.values()) {
      if (out.length >= limit) break;
      if (!inScope(scope, e)) continue;
      const hit =
        "resourceId" in subject
          ? e.resourceId === subject.resourceId
          : e.recipientKey === subject.recipientKey;
      if (hit) out.push(e.id);
    }
    return out;
  }

  async deleteMany(scope: Scope, ids: readonly string[]): Promise<number> {
    let n = 0;
    for (const id of new Set(ids)) {
      const e = this.rows.get(id);
      if (e && inScope(scope, e)) {
        this.rows.delete(id);
        n++;
      }
    }
    return n;
  }

  async listWithoutSubjects(limit: number): Promise<StoredEvent[]> {
    return [...this.rows.values()]
      .filter((e) => e.resourceId === null)
      .slice(0, limit)
      .map(flat);
  }

  async setSubjects(subjects: readonly EventSubjects[]): Promise<void> {
    for (const s of subjects) {
      const e = this.rows.get(s.id);
      if (!e) continue;
      e.resourceId = s.resourceId;
      e.recipientKey = s.recipientKey;
    }
  }
}
