import type { Cursor, Page, PageRequest } from "../../app/ports/paging.ts";

/** The order of every list: newest first by (created_at, _id), both descending. */
export const NEWEST_FIRST = { created_at: -1, _id: -1 } as const;

interface Listed {
  _id: string;
  created_at: Date;
}

/**
 * Adds "strictly after the cursor" to a filter. The created_at bound stays a plain range on the index;
 * the $or only separates the items that share the cursor's timestamp.
 */
export function afterCursor<F extends object>(filter: F, cursor: Cursor | null): F {
  if (!cursor) return filter;
  // created_at in a list filter is always an operator object ($gte/$lt), never a plain date.
  const range = (filter as { created_at?: object }).created_at;
  return {
    ...filter,
    created_at: { ...range, $lte: cursor.createdAt },
    $or: [{ created_at: { $lt: cursor.createdAt } }, { _id: { $lt: cursor.id } }],
  };
}

/** How many to fetch: one more than the page, to learn whether another page follows. */
export const fetchSize = (page: PageRequest): number => page.limit + 1;

/** The page of documents fetched with fetchSize, newest first; `next` is set only when more follow. */
export function toPage<D extends Listed, T>(
  docs: readonly D[],
  page: PageRequest,
  map: (d: D) => T,
): Page<T> {
  const shown = docs.slice(0, page.limit);
  const last = shown[shown.length - 1];
  const next = docs.length > page.limit && last ? { createdAt: last.created_at, id: last._id } : null;
  return { data: shown.map(map), next };
}
