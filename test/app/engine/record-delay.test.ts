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

describe("the record delay of a process owning a share of the shards", () => {
  const stretched = (share: number, gapMs: number) => {
    const d = recordDelay({ ...options, share: () => share });
    for (let i = 0; i < 50; i++) d.arrived(i * gapMs);
    return d.delayMs();
  };

  it("waits up to batchMs divided by its share, for the same batch at its share of the rate", () => {
    // One of ten processes gets results a tenth as often: 25 ms apart instead of 2.5.
    expect(stretched(0.1, 25)).toBeCloseTo(500, 0);
    expect(stretched(1 / 3, 10)).toBeCloseTo(200, 0);
    expect(stretched(1 / 3, 20)).toBeCloseTo(300, 0);
  });

  it("never stretches the cap more than tenfold, nor waits longer than one process would for a full share", () => {
    expect(stretched(0, 40)).toBe(800);
    expect(stretched(0.01, 50)).toBe(1000);
    expect(stretched(1, 10)).toBe(100);
  });

  it("waits the short delay when even the stretched cap would gather fewer than four", () => {
    expect(stretched(0.1, 300)).toBe(5);
  });
});
