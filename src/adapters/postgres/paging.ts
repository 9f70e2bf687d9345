import type { Fragment, Sql } from "postgres";
import type { Cursor, Page, PageRequest } from "../../app/ports/paging.ts";

interface Listed {
  id: string;
  created_at: Date;
}

/**
 * "Strictly after the cursor" in newest-first order, as `AND ...` (nothing without a cursor). A row
 * comparison, so the (…, created_at DESC, id DESC) indexes read from the cursor on, not from the start.
 */
export function afterCursor(sql: Sql, cursor: Cursor | null): Fragment {
  return cursor ? sql`AND (created_at, id) < (${cursor.createdAt}, ${cursor.id})` : sql``;
}

/** The order of every list: newest first by (created_at, id), both descending. */
export const newestFirst = (sql: Sql): Fragment => sql`ORDER BY created_at DESC, id DESC`;

/** How many to fetch: one more than the page, to learn whether another page follows. */
export const fetchSize = (page: PageRequest): number => page.limit + 1;

/** The page of rows fetched with fetchSize, newest first; `next` is set only when more follow. */
export function toPage<R extends Listed, T>(
  rows: readonly R[],
  page: PageRequest,
  map: (r: R) => T,
): Page<T> {
  const shown = rows.slice(0, page.limit);
  const last = shown[shown.length - 1];
  const next = rows.length > page.limit && last ? { createdAt: last.created_at, id: last.id } : null;
  return { data: shown.map(map), next };
}
