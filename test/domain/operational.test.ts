import { describe, expect, it } from "vitest";
import type { Endpoint } from "../../src/domain/endpoint.ts";
import { EVENT_DATA_SCHEMAS } from "../../src/domain/event-catalog.ts";
import {
  disabledNotice,
  exhaustedNotice,
  failingNotice,
  isOperationsEndpoint,
  NOTICE_KEY_PREFIX,
  type OperationalNotice,
  recoveredNotice,
} from "../../src/domain/operational.ts";
import { anEndpoint } from "../app/ports/fixtures.ts";

const t0 = new Date("2026-11-21T10:00:00.000Z");
const at = (ms: number) => new Date(t0.getTime() + ms);
const HOUR = 3_600_000;

const endpoint = (over: Partial<Endpoint> = {}): Endpoint =>
  anEndpoint(
    { tenantId: "11111111-1111-4111-8111-111111111111", projectId: "22222222-2222-4222-8222-222222222222" },
    {
      id: "5b0d7f3a-1c2e-4d5f-8a9b-0c1d2e3f4a5b",
      url: "https://hooks.example.com/h",
      events: ["message.sent"],
      secrets: [],
      createdAt: t0,
      updatedAt: t0,
      ...over,
    },
  );

/** Every notice's data is valid against the catalog: what publish checks. */
const valid = (n: OperationalNotice | null): OperationalNotice => {
  expect(n).not.toBeNull();
  expect(EVENT_DATA_SCHEMAS[n!.type].safeParse(n!.data).error).toBeUndefined();
  return n!;
};

describe("operational notices", () => {
  it("endpoint.disabled: owed once per disable with a known time, keyed by it", () => {
    const off = endpoint({
      enabled: false,
      disabledReason: "failing",
      disabledAt: at(5 * HOUR),
      failingSince: t0,
      description: "billing",
    });
    const n = valid(disabledNotice(off));
    expect(n).toMatchObject({
      type: "endpoint.disabled",
      endpointId: off.id,
      tenantId: off.tenantId,
      projectId: off.projectId,
      data: {
        endpoint_id: off.id,
        url: off.url,
        description: "billing",
        disabled_reason: "failing",
        disabled_at: at(5 * HOUR).toISOString(),
        failing_since: t0.toISOString(),
      },
    });
    expect(n.key).toBe(`${NOTICE_KEY_PREFIX}endpoint.disabled/${off.id}/${at(5 * HOUR).getTime()}`);
    // Not printable ASCII: no publisher's Idempotency-Key can take it.
    expect(/^[\x20-\x7e]+$/.test(n.key)).toBe(false);
    expect(disabledNotice({ ...off, disabledNotice: off.disabledAt })).toBeNull();
    expect(disabledNotice({ ...off, disabledAt: null })).toBeNull();
    expect(disabledNotice(endpoint())).toBeNull();
    // Another disable is another occurrence.
    expect(disabledNotice({ ...off, disabledAt: at(9 * HOUR) })!.key).not.toBe(n.key);
  });

  it("endpoint.failing: once the unreported streak is HERALD_FAILING_AFTER old; never about an operations endpoint", () => {
    const failing = endpoint({ failingSince: t0 });
    expect(failingNotice(failing, at(HOUR - 1), HOUR)).toBeNull();
    const n = valid(failingNotice(failing, at(HOUR), HOUR));
    expect(n.data).toEqual({ endpoint_id: failing.id, url: failing.url, failing_since: t0.toISOString() });
    // The key is the streak's: the same at any later moment.
    expect(failingNotice(failing, at(7 * HOUR), HOUR)!.key).toBe(n.key);
    expect(failingNotice({ ...failing, failingNotice: t0 }, at(HOUR), HOUR)).toBeNull();
    expect(failingNotice({ ...failing, enabled: false }, at(HOUR), HOUR)).toBeNull();
    expect(
      failingNotice({ ...failing, events: ["endpoint.disabled", "delivery.exhausted"] }, at(HOUR), HOUR),
    ).toBeNull();
  });

  it("endpoint.recovered: only for a streak endpoint.failing reported, with the same key shape", () => {
    expect(recoveredNotice(endpoint({ failingSince: t0 }))).toBeNull();
    expect(recoveredNotice(endpoint())).toBeNull();
    const reported = endpoint({ failingSince: t0, failingNotice: t0 });
    const n = valid(recoveredNotice(reported));
    expect(n.data).toMatchObject({ failing_since: t0.toISOString() });
    expect(n.key).toBe(`${NOTICE_KEY_PREFIX}endpoint.recovered/${reported.id}/${t0.getTime()}`);
    expect(recoveredNotice({ ...reported, failingNotice: at(-1) })).toBeNull();
    expect(recoveredNotice({ ...reported, events: ["endpoint.failing"] })).toBeNull();
  });

  it("delivery.exhausted: for an automatic attempt of a published event, keyed by the attempt", () => {
    const attempt = {
      delivery: {
        id: "0b6f8a52-3c1d-4e7a-9f20-5d8c7b6a4e31",
        eventId: "evt_4f9a0c2e8b7d4e1f9a3c5b7d9e1f3a5c",
        eventType: "message.sent" as const,
        attempt: 4,
        trigger: "automatic" as const,
      },
      attemptedAt: at(1000),
      responseStatus: null,
      error: "timeout" as const,
    };
    const n = valid(exhaustedNotice(endpoint(), attempt));
    expect(n.data).toEqual({
      endpoint_id: endpoint().id,
      url: endpoint().url,
      event_id: attempt.delivery.eventId,
      event_type: "message.sent",
      delivery_id: attempt.delivery.id,
      attempt: 4,
      attempted_at: at(1000).toISOString(),
      error: "timeout",
    });
    expect(n.key).toBe(`${NOTICE_KEY_PREFIX}delivery.exhausted/${attempt.delivery.id}`);
    expect(
      exhaustedNotice(endpoint(), { ...attempt, delivery: { ...attempt.delivery, trigger: "manual" } }),
    ).toBeNull();
    // Never about the delivery of an operational event: no stream about an operations endpoint.
    expect(
      exhaustedNotice(endpoint(), {
        ...attempt,
        delivery: { ...attempt.delivery, eventType: "delivery.exhausted" },
      }),
    ).toBeNull();
  });

  it("an operations endpoint takes operational types only", () => {
    expect(isOperationsEndpoint({ events: ["endpoint.failing", "delivery.exhausted"] })).toBe(true);
    expect(isOperationsEndpoint({ events: ["endpoint.failing", "message.sent"] })).toBe(false);
    expect(isOperationsEndpoint({ events: [] })).toBe(false);
  });
});
