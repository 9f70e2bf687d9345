import { describe, expect, it } from "vitest";
import { systemIds } from "../../src/adapters/system.ts";

describe("systemIds.randomBytes", () => {
  it("gives the length asked for, never the same bytes twice, across pool refills and beyond the pool size", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const b = systemIds.randomBytes(16);
      expect(b.length).toBe(16);
      const hex = Buffer.from(b).toString("hex");
      expect(seen.has(hex)).toBe(false);
      seen.add(hex);
    }
    expect(systemIds.randomBytes(10_000).length).toBe(10_000);
  });

  it("hands out copies: changing one does not change the next", () => {
    const a = systemIds.randomBytes(32);
    a.fill(0);
    const b = systemIds.randomBytes(32);
    expect(b.some((x) => x !== 0)).toBe(true);
  });

  it("looks uniformly random (every byte value turns up in 64 KiB)", () => {
    const counts = new Array(256).fill(0);
    for (let i = 0; i < 2_048; i++) for (const x of systemIds.randomBytes(32)) counts[x]++;
    expect(Math.min(...counts)).toBeGreaterThan(100);
  });
});
