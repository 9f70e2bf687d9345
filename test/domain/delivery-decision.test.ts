import { describe, expect, it } from "vitest";
import { type AttemptFacts, decideAfterAttempt } from "../../src/domain/delivery-decision.ts";

const NOW = new Date("2026-11-22T10:00:00.000Z");
type FactsOver = Partial<Omit<AttemptFacts, "outcome">> & { outcome?: Partial<AttemptFacts["outcome"]> };
const facts = (over: FactsOver = {}): AttemptFacts => ({
  delivery: { attempt: 1, trigger: "automatic" },
  retryScheduleMs: [5_000, 30_000],
  random: 0.5,
  now: NOW,
  ...over,
  outcome: { ok: false, responseStatus: 500, retryAfterMs: null, ...over.outcome },
});
const later = (ms: number) => new Date(NOW.getTime() + ms);

describe("the decision after an attempt", () => {
  it("a success ends the endpoint's failure streak and schedules nothing", () => {
    expect(decideAfterAttempt(facts({ outcome: { ok: true, responseStatus: 204 } }))).toEqual({
      status: "succeeded",
      streak: "end",
      retryAt: null,
      disable: null,
    });
  });

  it("a failed automatic attempt is retried after the schedule's delay for it", () => {
    expect(decideAfterAttempt(facts()).retryAt).toEqual(later(5_000));
    expect(decideAfterAttempt(facts({ delivery: { attempt: 2, trigger: "automatic" } })).retryAt).toEqual(
      later(30_000),
    );
    expect(decideAfterAttempt(facts())).toMatchObject({ status: "failed", streak: "start", disable: null });
  });

  it("jitters the delay by ±20%", () => {
    expect(decideAfterAttempt(facts({ random: 0 })).retryAt).toEqual(later(4_000));
    expect(decideAfterAttempt(facts({ random: 0.999999 })).retryAt).toEqual(later(6_000));
  });

  it("waits at least a Retry-After, but never beyond 24 h", () => {
    expect(
      decideAfterAttempt(facts({ outcome: { responseStatus: 429, retryAfterMs: 120_000 } })).retryAt,
    ).toEqual(later(120_000));
    expect(
      decideAfterAttempt(facts({ outcome: { responseStatus: 503, retryAfterMs: 1_000 } })).retryAt,
    ).toEqual(later(5_000));
    expect(
      decideAfterAttempt(facts({ outcome: { responseStatus: 503, retryAfterMs: 90 * 3_600_000 } })).retryAt,
    ).toEqual(later(24 * 3_600_000));
  });

  it("gives up after the last delay of the schedule", () => {
    expect(decideAfterAttempt(facts({ delivery: { attempt: 3, trigger: "automatic" } }))).toEqual({
      status: "failed",
      streak: "start",
      retryAt: null,
      disable: null,
    });
  });

  it("never retries a manual attempt", () => {
    expect(decideAfterAttempt(facts({ delivery: { attempt: 1, trigger: "manual" } })).retryAt).toBeNull();
  });

  it("a 410 Gone disables the endpoint and is never retried, even for an automatic first attempt", () => {
    expect(decideAfterAttempt(facts({ outcome: { responseStatus: 410 } }))).toEqual({
      status: "failed",
      streak: "start",
      retryAt: null,
      disable: "gone",
    });
  });
});
