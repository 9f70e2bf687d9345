import type { Cursor, Page, PageRequest } from "../../app/ports/paging.ts";

interface Listed {
  id: string;
  createdAt: Date;
}

/** Newest first by (createdAt, id), both descending: the order every list uses. */
export function newestFirst(a: Listed, b: Listed): number {
  const t = b.createdAt.getTime() - a.createdAt.getTime();
  if (t !== 0) return t;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** True when the item sorts strictly after the cursor in newest-first order. */
export function isAfterCursor(item: Listed, cursor: Cursor | null): boolean {
  if (!cursor) return true;
  const t = item.createdAt.getTime() - cursor.createdAt.getTime();
  return t < 0 || (t === 0 && item.id < cursor.id);
}

/** One page of items already filtered; sorts them newest first. */
export function pageOf<T extends Listed>(items: T[], page: PageRequest): Page<T> {
  const sorted = items.filter((i) => isAfterCursor(i, page.cursor)).sort(newestFirst);
  const data = sorted.slice(0, page.limit);
  const last = data[data.length - 1];
  const next = sorted.length > page.limit && last ? { createdAt: last.createdAt, id: last.id } : null;
  return { data, next };
}
