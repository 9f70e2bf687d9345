import { describe, expect, it } from "vitest";
import { assignShards, SHARD_COUNT, shardOf } from "../../src/domain/shards.ts";

const counts = (m: Map<number, string>) => {
  const c = new Map<string, number>();
  for (const p of m.values()) c.set(p, (c.get(p) ?? 0) + 1);
  return c;
};

describe("endpoint shards", () => {
  it("puts an endpoint in one stable shard (pinned: stored on records, so it must never change)", () => {
    expect(shardOf("0b8f5a8e-3c1d-4c39-9a5e-6f7d1c2b3a4e")).toBe(
      shardOf("0b8f5a8e-3c1d-4c39-9a5e-6f7d1c2b3a4e"),
    );
    expect(shardOf("")).toBe(0x811c9dc5 % SHARD_COUNT);
    expect([shardOf("a"), shardOf("webhook-1")]).toEqual([0xe40c292c % 256, 0xc9415b20 % 256]);
    const seen = new Set(Array.from({ length: 5000 }, (_, i) => shardOf(`wh_${i}`)));
    expect(seen.size).toBe(SHARD_COUNT);
  });

  it("gives every shard to one live process, each owning within one of the same number", () => {
    for (const n of [1, 2, 3, 5, 7]) {
      const processes = Array.from({ length: n }, (_, i) => `host:${i}`);
      const m = assignShards(processes);
      expect(m.size).toBe(SHARD_COUNT);
      const c = [...counts(m).values()];
      expect(c).toHaveLength(n);
      expect(Math.max(...c) - Math.min(...c)).toBeLessThanOrEqual(
        Math.ceil(SHARD_COUNT / n) * n - SHARD_COUNT + 1,
      );
      expect(Math.max(...c)).toBeLessThanOrEqual(Math.ceil(SHARD_COUNT / n));
    }
  });

  it("is the same whatever order the processes are listed in, and repeats are ignored", () => {
    expect(assignShards(["c", "a", "b"])).toEqual(assignShards(["a", "b", "c", "a"]));
  });

  it("moves few shards when a process joins or leaves", () => {
    const three = assignShards(["a", "b", "c"]);
    const four = assignShards(["a", "b", "c", "d"]);
    let moved = 0;
    for (const [s, p] of three) if (four.get(s) !== p) moved++;
    // d's share must move to it; a little more can move to keep the others within one of each other.
    expect(moved).toBeGreaterThanOrEqual(64);
    expect(moved).toBeLessThan(110);
    expect(assignShards([]).size).toBe(0);
  });
});
