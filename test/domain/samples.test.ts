import { describe, expect, it } from "vitest";
import { EVENT_DATA_SCHEMAS, EVENT_TYPES } from "../../src/domain/event-catalog.ts";
import { sampleEventData } from "../../src/domain/samples.ts";

describe("sample event data", () => {
  it.each(EVENT_TYPES)("is valid for %s", (type) => {
    const data = sampleEventData(type, { subjectId: "6f1c2b9e-8a44-4c1e-9a53-0d5b2f7e1a10" }, new Date());
    const r = EVENT_DATA_SCHEMAS[type].safeParse(data);
    expect(r.error?.issues ?? []).toEqual([]);
  });
});
