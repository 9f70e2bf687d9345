import { describe, expect, it } from "vitest";
import { heldShards } from "../../../src/app/engine/held-shards.ts";
import { SHARD_COUNT } from "../../../src/domain/shards.ts";

/** A monotonic clock the test moves, and a proof of life it breaks. */
function setup() {
  const clock = { t: 1_000 };
  const life = { ok: true, validUntil: Number.POSITIVE_INFINITY, valid: () => life.ok };
  const leases = heldShards(() => clock.t, life);
  const lease = (generation: number, validUntil = 5_000, notBefore = 0) => ({
    generation,
    validUntil,
    since: 42,
    notBefore,
  });
  return { clock, life, leases, lease };
}

describe("the shards this process holds", () => {
  it("claims only from shards held, within their window, past their wait and not being given back", () => {
    const { clock, leases, lease } = setup();
    leases.take(1, lease(3));
    leases.take(2, lease(1, 2_000));
    leases.take(3, lease(1, 5_000, 1_500));
    leases.take(4, lease(1));
    expect(leases.claimable()).toEqual([1, 2, 4]);
    expect(leases.giveBack(4)).toBe(1);
    // Once only: a shard already going is not given back again.
    expect(leases.giveBack(4)).toBe(null);
    expect(leases.claimable()).toEqual([1, 2]);
    expect(leases.mayClaim(4)).toBe(false);
    // The cache runs out with the first window or wait, without a change of lease.
    clock.t = 2_000;
    expect(leases.claimable()).toEqual([1, 3]);
    expect(leases.mayClaim(2)).toBe(false);
    expect(leases.mayClaim(3)).toBe(true);
    expect(leases.tenure(1)).toEqual({ generation: 3, since: 42 });
    expect(leases.tenure(9)).toBe(null);
  });

  it("answers null for all 256, and nothing while the proof of life does not hold", () => {
    const { life, leases, lease } = setup();
    for (let shard = 0; shard < SHARD_COUNT; shard++) leases.take(shard, lease(1));
    expect(leases.claimable()).toBe(null);
    life.ok = false;
    leases.changed();
    expect(leases.claimable()).toEqual([]);
    expect(leases.mayClaim(0)).toBe(false);
  });

  it("a give-back ends only its own generation; a lost proof drops everything and is counted", () => {
    const { leases, lease } = setup();
    leases.take(1, lease(1));
    leases.take(2, lease(1));
    leases.giveBack(1);
    // Taken again under a newer generation while the old one was being given back: that one stays.
    leases.take(1, lease(2));
    leases.givenBack(1, 1);
    expect(leases.tenure(1)?.generation).toBe(2);
    expect(leases.claimable()).toEqual([1, 2]);
    leases.giveBack(2);
    leases.givenBack(2, 1);
    expect(leases.has(2)).toBe(false);
    expect(leases.losses).toBe(0);
    leases.loseAll();
    expect([leases.size, leases.losses]).toEqual([0, 1]);
    expect(leases.claimable()).toEqual([]);
  });

  it("a renewal reopens the window; a stop releases everything held", () => {
    const { clock, leases, lease } = setup();
    leases.take(7, lease(4, 1_500));
    clock.t = 1_600;
    expect(leases.claimable()).toEqual([]);
    leases.extend(7, 3_000);
    expect(leases.claimable()).toEqual([7]);
    leases.drop(7);
    expect(leases.claimable()).toEqual([]);
    leases.take(8, lease(2));
    expect(leases.releaseAll()).toEqual([{ shard: 8, generation: 2 }]);
    expect(leases.size).toBe(0);
  });
});
