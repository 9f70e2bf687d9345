import { describe, expect, it } from "vitest";
import { recordDelay } from "../../../src/app/engine/record-delay.ts";

const options = { delayMs: 5, batchMs: 100, batchRows: 20 };

function arriving(gapMs: number, count = 50) {
  const d = recordDelay(options);
  for (let i = 0; i < count; i++) d.arrived(i * gapMs);
  return d.delayMs();
}

describe("the record delay", () => {
  it("waits the short delay before it knows a rate", () => {
    expect(recordDelay(options).delayMs()).toBe(5);
  });

  it("waits for about batchRows results at a steady rate", () => {
    expect(arriving(2)).toBeCloseTo(40, 0);
  });

  it("waits at most batchMs, and the short delay when batchMs would gather fewer than four", () => {
    expect(arriving(10)).toBe(100);
    expect(arriving(30)).toBe(5);
  });

  it("never waits less than the short delay", () => {
    expect(arriving(0)).toBe(5);
  });
});
