import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY_SCHEDULE_MS,
  MAX_DELAY_MS,
  nextRetryDelay,
  parseRetryAfter,
} from "../../src/domain/backoff.ts";
import { formatDuration, isoSeconds, parseDuration } from "../../src/domain/time.ts";

describe("backoff", () => {
  const schedule = DEFAULT_RETRY_SCHEDULE_MS;

  it("follows the schedule, with +/-20% jitter", () => {
    expect(nextRetryDelay({ failedAttempt: 1, scheduleMs: schedule, random: 0.5 })).toBe(5_000);
    expect(nextRetryDelay({ failedAttempt: 1, scheduleMs: schedule, random: 0 })).toBe(4_000);
    expect(nextRetryDelay({ failedAttempt: 1, scheduleMs: schedule, random: 0.999999 })).toBe(6_000);
    expect(nextRetryDelay({ failedAttempt: 3, scheduleMs: schedule, random: 0.5 })).toBe(120_000);
  });

  it("gives up after the last retry: the schedule's length is the number of retries", () => {
    expect(schedule).toHaveLength(11);
    expect(nextRetryDelay({ failedAttempt: 11, scheduleMs: schedule, random: 0.5 })).toBe(86_400_000);
    expect(nextRetryDelay({ failedAttempt: 12, scheduleMs: schedule, random: 0.5 })).toBeNull();
    expect(nextRetryDelay({ failedAttempt: 1, scheduleMs: [], random: 0.5 })).toBeNull();
  });

  it("lets Retry-After lengthen the delay, never shorten it, never beyond 24 h", () => {
    expect(
      nextRetryDelay({ failedAttempt: 1, scheduleMs: schedule, random: 0.5, retryAfterMs: 60_000 }),
    ).toBe(60_000);
    expect(nextRetryDelay({ failedAttempt: 1, scheduleMs: schedule, random: 0.5, retryAfterMs: 1_000 })).toBe(
      5_000,
    );
    expect(
      nextRetryDelay({
        failedAttempt: 11,
        scheduleMs: schedule,
        random: 0.999,
        retryAfterMs: 3 * MAX_DELAY_MS,
      }),
    ).toBe(MAX_DELAY_MS);
  });

  it("parses Retry-After as seconds or an HTTP date", () => {
    const now = new Date("2026-11-21T10:00:00Z");
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter("Sat, 21 Nov 2026 10:01:00 GMT", now)).toBe(60_000);
    expect(parseRetryAfter("soon", now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter("999999999", now)).toBe(MAX_DELAY_MS);
  });
});

describe("durations and timestamps", () => {
  it("parses and formats the contract's duration forms", () => {
    expect(parseDuration("500ms")).toBe(500);
    expect(parseDuration("5s")).toBe(5_000);
    expect(parseDuration("2m")).toBe(120_000);
    expect(parseDuration("1h")).toBe(3_600_000);
    expect(parseDuration("5d")).toBe(432_000_000);
    expect(parseDuration("5")).toBeNull();
    expect(parseDuration("-5s")).toBeNull();
    expect(parseDuration("5 weeks")).toBeNull();
    expect(formatDuration(120_000)).toBe("2m");
    expect(formatDuration(1_500)).toBe("1500ms");
  });

  it("writes second-precision timestamps", () => {
    expect(isoSeconds(new Date("2026-11-21T10:00:00.987Z"))).toBe("2026-11-21T10:00:00Z");
  });
});
