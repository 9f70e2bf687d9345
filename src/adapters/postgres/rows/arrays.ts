// Batches are written with `unnest` over one typed array per column: one statement and a fixed number of
// parameters whatever the batch size, so the statement is prepared once. postgres.js types an array
// parameter from its element type's array OID, which it learns on a connection's first start (fetch_types,
// the default; the store migrates before any repository runs), hence `sql.array(values, ELEMENT_OID)`.
import type { Sql } from "postgres";

/** Element type OIDs for `sql.array` (pg_type). */
export const OID = { text: 25, int4: 23, int8: 20, bool: 16, timestamptz: 1184 } as const;

/** Typed array parameters, for `= ANY(${...}::text[])` and `unnest(...)`; cast them in the SQL as well. */
export const texts = (sql: Sql, xs: readonly (string | null)[]) => sql.array([...xs], OID.text);
export const ints = (sql: Sql, xs: readonly (number | null)[]) => sql.array([...xs], OID.int4);
export const bigints = (sql: Sql, xs: readonly number[]) => sql.array([...xs], OID.int8);
export const bools = (sql: Sql, xs: readonly boolean[]) => sql.array([...xs], OID.bool);
export const times = (sql: Sql, xs: readonly (Date | null)[]) => sql.array([...xs], OID.timestamptz);
