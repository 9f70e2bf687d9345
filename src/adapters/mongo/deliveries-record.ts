import type { AnyBulkWriteOperation, Collection } from "mongodb";
import type { AttemptResult } from "../../app/ports/deliveries.ts";
import type { Delivery } from "../../domain/delivery.ts";
import type { DeliveryDoc } from "./documents/deliveries.ts";
import { isTimeout } from "./errors-kind.ts";

/** Results in one write command at most (as the PostgreSQL store's batches). */
export const RESULTS_PER_COMMAND = 200;
/**
 * What one write command of results aims to take at most: far inside the client's 30 s socket timeout
 * (repositories.ts), so that a slow server makes the commands smaller rather than fail.
 */
export const COMMAND_BUDGET_MS = 3_000;
/** The first command's size, before any has been timed. */
const FIRST_COMMAND = 50;

/**
 * Writes results in commands of at most RESULTS_PER_COMMAND, fewer while the server's statements are
 * slow: each command's size is what fits COMMAND_BUDGET_MS at the time per result the last commands
 * took (a command that timed out counts as having taken the whole timeout). Why: FerretDB v1 on
 * SQLite reads the whole collection for every guarded update (a filter on `_id` and `status` is not
 * pushed down to SQLite), about 40 µs per stored record on a loaded machine. After a crash under load
 * the collection held thousands of records and one command of 200 results ran past the 30 s socket
 * timeout, again and again (issue 31; docs/adr/0010-database-outages.md). A real MongoDB answers a
 * result in well under a millisecond, so there every command carries the whole 200.
 */
export function resultWriter(
  col: Collection<DeliveryDoc>,
  insertMany: (deliveries: readonly Delivery[]) => Promise<void>,
  now: () => number = () => performance.now(),
): (results: readonly AttemptResult[]) => Promise<void> {
  let msPerResult = COMMAND_BUDGET_MS / FIRST_COMMAND;
  const observe = (ms: number, count: number) => {
    msPerResult = (msPerResult + ms / count) / 2;
  };
  return async (results) => {
    for (let at = 0; at < results.length; ) {
      const size = Math.max(1, Math.min(RESULTS_PER_COMMAND, Math.floor(COMMAND_BUDGET_MS / msPerResult)));
      const chunk = results.slice(at, at + size);
      const started = now();
      try {
        await writeResults(col, insertMany, chunk);
      } catch (e) {
        if (isTimeout(e)) observe(now() - started, chunk.length);
        throw e;
      }
      observe(now() - started, chunk.length);
      at += chunk.length;
    }
  };
}

/**
 * One command's worth of results, in two writes: the follow-up attempts' insert first (a crash before
 * the update leaves the current record pending, so it is sent again, and its follow-up is never lost),
 * then one bulk update of the results, each only while its record is still pending; a third when a
 * result acknowledges its pair (ADR 19). Safe to repeat.
 */
async function writeResults(
  col: Collection<DeliveryDoc>,
  insertMany: (deliveries: readonly Delivery[]) => Promise<void>,
  results: readonly AttemptResult[],
): Promise<void> {
  await insertMany(results.flatMap((r) => (r.next ? [r.next] : [])));
  // `updateMany` on an `_id` filter changes at most one record, as `updateOne` would; it is used because
  // FerretDB v1 keeps the PostgreSQL connection of every `updateOne` statement's lookup open (a limited
  // iterator is never read to its end) until the whole command ends, and needs a second one for the
  // write: a batch of 200 results held its whole pool and wedged it. A multi-update reads its lookup to
  // the end, which frees the connection before the write.
  const ops: AnyBulkWriteOperation<DeliveryDoc>[] = [];
  for (const r of results) {
    const update = {
      $set: {
        status: r.status,
        response_status: r.responseStatus,
        response_body: r.responseBody,
        error: r.error,
        duration_ms: r.durationMs,
        attempted_at: r.attemptedAt,
        next_attempt_at: r.nextAttemptAt,
        signature_scheme: r.signatureScheme ?? null,
        header_names: r.headerNames ?? null,
        receipt: r.receipt ?? null,
      },
    };
    ops.push({ updateMany: { filter: { _id: r.id, status: "pending" }, update } });
    // Superseded while its send was in flight (ADR 19): the send's outcome is what happened. Equality
    // statements only, and only for such results, which are rare.
    if (r.acknowledgedInFlight) {
      ops.push({ updateMany: { filter: { _id: r.id, status: "cancelled", error: "superseded" }, update } });
    }
  }
  // Ordered: an update that matches nothing is no error, so the order costs nothing here.
  const written = await col.bulkWrite(ops, { ordered: true });
  // Each result matches at most one of its updates: fewer matched means some record was finished by
  // another owner meanwhile (this process lost the shard while its send was on its way).
  if (written.matchedCount < results.length) await withdrawFollowUps(col, results);
  // Then, for each pair a result acknowledges, its pending automatic attempts are cancelled: equality
  // statements on the pair (its index), after the results' update so this batch's own records are no
  // longer pending. A crash before this write leaves them pending: sent again, at least once.
  const acks = results.flatMap((r) => (r.acknowledges ? [r.acknowledges] : []));
  if (acks.length === 0) return;
  await col.bulkWrite(
    acks.map((a) => ({
      updateMany: {
        filter: { event_id: a.eventId, webhook_id: a.webhookId, status: "pending", trigger: "automatic" },
        update: { $set: { status: "cancelled", error: "superseded", next_attempt_at: null } },
      },
    })),
    { ordered: false },
  );
}

/**
 * The follow-ups inserted above for results whose record another owner finished meanwhile: left pending,
 * they would send the event again. A follow-up is due a retry's delay after its result was decided, so it
 * is withdrawn before anyone sends it. One with the id the record's own outcome made (that owner's result
 * failed too: the id derives from the record's) is that owner's and stays; so does anything not pending.
 */
async function withdrawFollowUps(col: Collection<DeliveryDoc>, results: readonly AttemptResult[]) {
  const withNext = results.filter((r) => r.next);
  if (withNext.length === 0) return;
  const records = await col
    .find({ _id: { $in: withNext.map((r) => r.id) } })
    .project<Pick<DeliveryDoc, "_id" | "status" | "next_attempt_at">>({
      _id: 1,
      status: 1,
      next_attempt_at: 1,
    })
    .toArray();
  // Written by this result, or finished by the other owner with a follow-up (the same id): it stays.
  const finishedWithout = new Set(
    records.filter((d) => d.status !== "pending" && d.next_attempt_at == null).map((d) => d._id),
  );
  const stale = withNext.filter((r) => finishedWithout.has(r.id));
  if (stale.length === 0) return;
  await col.bulkWrite(
    stale.map((r) => ({
      deleteMany: { filter: { _id: r.next!.id, status: "pending", attempt: r.next!.attempt } },
    })),
    { ordered: false },
  );
}
