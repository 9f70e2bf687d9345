import { describe, expect, it } from "vitest";
import { AcknowledgedPairs } from "../../../src/app/engine/acknowledged.ts";

describe("AcknowledgedPairs", () => {
  it("knows a pair by event and endpoint, and forgets the oldest past its bound", () => {
    const pairs = new AcknowledgedPairs(2);
    pairs.add("ev1", "wh1");
    expect(pairs.has("ev1", "wh1")).toBe(true);
    expect(pairs.has("ev1", "wh2")).toBe(false);
    pairs.add("ev2", "wh1");
    pairs.add("ev3", "wh1");
    expect([pairs.has("ev1", "wh1"), pairs.has("ev2", "wh1"), pairs.has("ev3", "wh1")]).toEqual([
      false,
      true,
      true,
    ]);
  });
});
