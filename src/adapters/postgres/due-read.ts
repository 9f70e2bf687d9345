import type { Sql } from "postgres";
import type { DueAnswer, DueRequest } from "../../app/ports/deliveries.ts";
import { OID } from "./rows/arrays.ts";
import { type DeliveryRow, deliveryFromRow } from "./rows/deliveries.ts";

/**
 * The engine's due read: one read of the partial index `deliveries_due` (pending rows only), earliest
 * first. The exclusions are filters on the rows the index finds; each is left out of the statement when
 * empty. Nothing is written (ADR 9). `perEndpointLimit` is not applied, as on MongoDB: honouring it
 * exactly means reading past the page (a window over every due row), and stopping at the page instead
 * would answer a short page while more is due, which tells the engine there is nothing more to read. The
 * engine keeps to each endpoint's room itself, and leaves a full endpoint out of its next read.
 *
 * With `until`, the same statement answers `next` (ADR 30): the first entry of the same index after `now`
 * in the shards, walked no further than `until` (what comes due soon in any shard, never the backlog of
 * later retries). The one row of the outer side carries it, joined with no delivery when none is due.
 */
export async function readDue(sql: Sql, r: DueRequest): Promise<DueAnswer> {
  if (r.limit <= 0 || (r.shards !== null && r.shards.length === 0)) return [];
  const shards =
    r.shards === null ? sql`` : sql`AND shard = ANY(${sql.array([...r.shards], OID.int4)}::integer[])`;
  const excludeWebhooks =
    r.excludeWebhookIds.length === 0
      ? sql``
      : sql`AND webhook_id <> ALL(${sql.array([...new Set(r.excludeWebhookIds)], OID.text)}::text[])`;
  const excludeIds =
    r.excludeIds.length === 0 ? sql`` : sql`AND id <> ALL(${sql.array([...r.excludeIds], OID.text)}::text[])`;
  const due = sql`SELECT * FROM deliveries
    WHERE status = 'pending' AND scheduled_at <= ${r.now} ${shards} ${excludeWebhooks} ${excludeIds}
    ORDER BY scheduled_at
    LIMIT ${r.limit}`;
  if (!r.until) return (await sql<DeliveryRow[]>`${due}`).map(deliveryFromRow);
  const rows = await sql<(DeliveryRow & { next_due: Date | null })[]>`
    SELECT n.next_due, d.* FROM (SELECT (
      SELECT scheduled_at FROM deliveries
      WHERE status = 'pending' AND scheduled_at > ${r.now} AND scheduled_at <= ${r.until} ${shards}
      ORDER BY scheduled_at LIMIT 1) AS next_due) n
    LEFT JOIN LATERAL (${due}) d ON true
    ORDER BY d.scheduled_at`;
  const answer: DueAnswer = rows.filter((row) => row.id !== null).map(deliveryFromRow);
  answer.next = rows[0]?.next_due ?? null;
  return answer;
}
