import { expect, it } from "vitest";
import type { AttemptResult } from "../../../src/app/ports/deliveries.ts";
import type { Repositories } from "../../../src/app/ports/store.ts";
import { type Delivery, repeatAttempt } from "../../../src/domain/delivery.ts";
import { nextDeliveryId } from "../../../src/domain/ids.ts";
import { aDelivery, at, newScope } from "./fixtures.ts";

/** A failed attempt's result with its follow-up (attempt 2, due in a minute), as the engine decides it. */
function failedWithRetry(d: Delivery): AttemptResult {
  const retryAt = at(60_000);
  return {
    id: d.id,
    status: "failed",
    responseStatus: null,
    responseBody: null,
    error: "timeout",
    durationMs: 2_000,
    attemptedAt: at(10),
    nextAttemptAt: retryAt,
    next: repeatAttempt(d, {
      id: nextDeliveryId(d.id),
      attempt: d.attempt + 1,
      trigger: "automatic",
      url: d.url,
      scheduledAt: retryAt,
      createdAt: at(10),
    }),
    acknowledges: null,
  };
}

const succeeded = (d: Delivery): AttemptResult => ({
  id: d.id,
  status: "succeeded",
  responseStatus: 200,
  responseBody: "ok",
  error: null,
  durationMs: 5,
  attemptedAt: at(20),
  nextAttemptAt: null,
  next: null,
  acknowledges: null,
});

/**
 * A process that lost a shard while its send was on its way (frozen, cut off) records its result late,
 * after the shard's next owner sent the delivery again and recorded it. Its result is not written, and
 * neither is its follow-up: that would send the event a third time (issue 26, a frozen process).
 */
export function recordFollowUpContract(store: () => Repositories): void {
  it("a late result for a record another owner finished writes no follow-up; one the record's own outcome made stays", async () => {
    const scope = newScope();
    const done = aDelivery(scope);
    const alsoFailed = aDelivery(scope);
    const mine = aDelivery(scope);
    await store().deliveries.insertMany([done, alsoFailed, mine]);
    // The next owner's outcomes: a success (no follow-up), a failure (its follow-up, the same id).
    await store().deliveries.record([succeeded(done), failedWithRetry(alsoFailed)]);
    // The old owner's late results, with the one of a record still pending beside them.
    const late = [failedWithRetry(done), failedWithRetry(alsoFailed), failedWithRetry(mine)];
    await store().deliveries.record(late);
    expect(await store().deliveries.get(scope, done.id)).toMatchObject({ status: "succeeded" });
    expect(await store().deliveries.get(scope, nextDeliveryId(done.id))).toBeNull();
    expect(await store().deliveries.get(scope, nextDeliveryId(alsoFailed.id))).toMatchObject({
      status: "pending",
      attempt: 2,
    });
    expect(await store().deliveries.get(scope, mine.id)).toMatchObject({ status: "failed" });
    expect(await store().deliveries.get(scope, nextDeliveryId(mine.id))).toMatchObject({
      status: "pending",
      attempt: 2,
    });
    // Nothing of it is due, however late: only the two follow-ups that belong are pending.
    const due = await store().deliveries.due({
      now: at(600_000),
      shards: null,
      limit: 1000,
      excludeWebhookIds: [],
      excludeIds: [],
    });
    expect(
      due
        .map((d) => d.id)
        .filter((id) => [done, alsoFailed, mine].some((d) => id === nextDeliveryId(d.id)))
        .sort(),
    ).toEqual([nextDeliveryId(alsoFailed.id), nextDeliveryId(mine.id)].sort());
  });
}
