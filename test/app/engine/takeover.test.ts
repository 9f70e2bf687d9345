import { describe, expect, it } from "vitest";
import { planTakeovers } from "../../../src/app/engine/takeover.ts";
import type { ShardLease } from "../../../src/app/ports/shards.ts";
import { SHARD_COUNT } from "../../../src/domain/shards.ts";

const now = new Date("2026-11-28T00:00:00Z");
const at = (ms: number) => new Date(now.getTime() + ms);
const lease = (shard: number, owner: string, expiresAt: Date, generation = 3): ShardLease => ({
  shard,
  generation,
  owner,
  expiresAt,
});

function plan(heads: ShardLease[], o: { alive?: string[]; held?: number[] } = {}) {
  const wanted = new Map(Array.from({ length: SHARD_COUNT }, (_, s) => [s, s < 6 ? "me" : "other"] as const));
  return planTakeovers({
    me: "me",
    wanted,
    held: new Set(o.held ?? []),
    heads: new Map(heads.map((h) => [h.shard, h])),
    alive: new Set(["me", ...(o.alive ?? [])]),
    now,
    expiresAt: at(60_000),
    deadWaitMs: 2_000,
  }).map((t) => [t.lease.shard, t.lease.generation, t.from, t.waitMs]);
}

describe("which shards a round tries to take", () => {
  it("free, given back, expired and its own lost leases at once; a dead owner's after the wait; a live owner's not", () => {
    expect(
      plan(
        [
          lease(1, "other", new Date(0)),
          lease(2, "other", at(-1)),
          lease(3, "me", at(10_000)),
          lease(4, "dead", at(10_000)),
          lease(5, "other", at(10_000)),
        ],
        { alive: ["other"] },
      ),
    ).toEqual([
      [0, 1, "free", 0],
      [1, 4, "free", 0],
      [2, 4, "expired", 0],
      [3, 4, "own", 0],
      [4, 4, "dead", 2_000],
    ]);
  });

  it("leaves alone what it holds and what the assignment gives to others, dead owner or not", () => {
    expect(
      plan([lease(0, "dead", at(10_000)), lease(7, "dead", at(10_000))], { held: [1, 2, 3, 4, 5] }),
    ).toEqual([[0, 4, "dead", 2_000]]);
  });
});
