import { describe, expect, it } from "vitest";
import { buildEnvelope, EVENT_ID_PATTERN, newEventId, serializeEnvelope } from "../../src/domain/envelope.ts";
import { DomainError } from "../../src/domain/errors.ts";

const MSG = "6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10";
const base = {
  id: newEventId(new Uint8Array(16).fill(171)),
  type: "message.delivered",
  tenantId: "11111111-1111-4111-8111-111111111111",
  projectId: "22222222-2222-4222-8222-222222222222",
  occurredAt: new Date("2026-11-21T10:00:00Z"),
  data: {
    message_id: MSG,
    status: "delivered",
    channel: "email",
    message_type: "transactional",
    recipient: "a@b.co",
  },
};

describe("envelope", () => {
  it("makes event ids of evt_ and 32 lowercase hex", () => {
    const id = newEventId(new Uint8Array(16).fill(171));
    expect(id).toBe(`evt_${"ab".repeat(16)}`);
    expect(EVENT_ID_PATTERN.test(id)).toBe(true);
    expect(() => newEventId(new Uint8Array(8))).toThrow();
  });

  it("builds the specification's envelope with version 1, milliseconds and resource_id from data", () => {
    const e = buildEnvelope(base);
    expect(e).toEqual({
      id: base.id,
      type: "message.delivered",
      version: "1",
      occurred_at: "2026-11-21T10:00:00.000Z",
      tenant_id: base.tenantId,
      project_id: base.projectId,
      resource_id: MSG,
      data: base.data,
    });
  });

  it("serialises in the specification's field order, the same bytes every time", () => {
    const body = serializeEnvelope(buildEnvelope(base));
    expect(Object.keys(JSON.parse(body))).toEqual([
      "id",
      "type",
      "version",
      "occurred_at",
      "tenant_id",
      "project_id",
      "resource_id",
      "data",
    ]);
    expect(serializeEnvelope(buildEnvelope(base))).toBe(body);
  });

  it("accepts a matching resource_id and refuses a different one", () => {
    expect(buildEnvelope({ ...base, resourceId: MSG }).resource_id).toBe(MSG);
    try {
      buildEnvelope({ ...base, resourceId: "00000000-0000-4000-8000-000000000000" });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).kind).toBe("validation_failed");
      expect((e as DomainError).issues[0]?.path).toBe("resource_id");
    }
  });

  it("refuses unknown types and bad data with located issues", () => {
    expect(() => buildEnvelope({ ...base, type: "message.vanished" })).toThrow(/not valid/);
    try {
      buildEnvelope({ ...base, data: { ...base.data, channel: "fax" } });
      expect.unreachable();
    } catch (e) {
      expect((e as DomainError).issues.map((i) => i.path)).toEqual(["data.channel"]);
    }
  });
});
