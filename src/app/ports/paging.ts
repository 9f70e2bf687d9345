// Tenancy scope and newest-first paging, shared by every list.
/** The tenant and project a token belongs to; every read and write is confined to it. */
export interface Scope {
  tenantId: string;
  projectId: string;
}

/** Position in a newest-first list: the last item's creation time and id. */
export interface Cursor {
  createdAt: Date;
  id: string;
}

export interface PageRequest {
  limit: number;
  cursor: Cursor | null;
}

/** A page of a newest-first list; `next` is the cursor of the last item when more may follow. */
export interface Page<T> {
  data: T[];
  next: Cursor | null;
}
