import { repeatAttempt } from "../../domain/delivery.ts";
import { decideAfterAttempt } from "../../domain/delivery-decision.ts";
import { nextDeliveryId } from "../../domain/ids.ts";
import { exhaustedNotice } from "../../domain/operational.ts";
import type { Decided, Sent } from "./work.ts";

/**
 * Stage 5, decide: the domain's `decideAfterAttempt` says what follows; this turns it into the record
 * to write and the next automatic attempt (its id derived from this one's, so writing it twice after a
 * crash makes one record). A manual attempt that succeeds acknowledges its pair: the pair's pending
 * automatic attempts are cancelled as superseded when it is recorded (ADR 19). An automatic success
 * needs no such write: automatic attempts form one chain, the next made only by the previous one's
 * failure, so none of its pair is pending beside it.
 */
export function decide(
  s: Sent,
  ctx: { retryScheduleMs: readonly number[]; random: number; now: Date },
): Decided {
  const d = s.delivery;
  const decision = decideAfterAttempt({
    delivery: d,
    outcome: s.outcome,
    retryScheduleMs: ctx.retryScheduleMs,
    random: ctx.random,
    now: ctx.now,
  });
  const next =
    decision.retryAt === null
      ? null
      : repeatAttempt(d, {
          id: nextDeliveryId(d.id),
          attempt: d.attempt + 1,
          trigger: "automatic",
          url: s.endpoint.url,
          scheduledAt: decision.retryAt,
          createdAt: ctx.now,
        });
  return {
    result: {
      id: d.id,
      status: decision.status,
      responseStatus: s.outcome.responseStatus,
      responseBody: s.outcome.responseBody,
      error: s.outcome.error,
      durationMs: s.outcome.durationMs,
      attemptedAt: s.attemptedAt,
      nextAttemptAt: decision.retryAt,
      next,
      // The endpoint as prepare read it for this send: what the request was signed and sent with.
      signatureScheme: s.endpoint.signatureScheme,
      headerNames: s.headers.map(([name]) => name),
      receipt: s.outcome.receipt ?? null,
      acknowledges:
        decision.status === "succeeded" && d.trigger === "manual"
          ? { eventId: d.eventId, webhookId: d.webhookId }
          : null,
    },
    endpointId: s.endpoint.id,
    // Only a change is written: a failing endpoint's streak is already running, a healthy one has none.
    streak:
      decision.streak === "end"
        ? s.endpoint.failingSince !== null
          ? "end"
          : null
        : s.endpoint.failingSince === null
          ? "start"
          : null,
    disable: decision.disable,
    // The automatic attempts end here, failed: the event is given up for this endpoint (ADR 20).
    exhausted:
      decision.status === "failed" && decision.retryAt === null
        ? exhaustedNotice(s.endpoint, {
            delivery: d,
            attemptedAt: s.attemptedAt,
            responseStatus: s.outcome.responseStatus,
            error: s.outcome.error,
          })
        : null,
  };
}
