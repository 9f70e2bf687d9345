import { afterEach, describe, expect, it } from "vitest";
import { MemoryShards } from "../../../src/adapters/memory/shards.ts";
import { shardOwnership } from "../../../src/app/engine/ownership.ts";
import { silentLogger } from "../../../src/app/logger.ts";
import { SHARD_COUNT } from "../../../src/domain/shards.ts";
import { countingMetrics, manualClock } from "../../support/engine-harness.ts";
import { until } from "../../support/until.ts";

// Stage 1 of the engine (ADR 9) on its own: leases, their renewal and what a lost one stops.

let stop: (() => Promise<void>) | null = null;
afterEach(async () => {
  await stop?.();
  stop = null;
});

/**
 * One process's ownership on a memory store, on a manual clock and a monotonic time the test moves:
 * renewals every 10 ms of real time, the round that reads the heads (and would notice a loss) hourly.
 */
function owning() {
  const shards = new MemoryShards();
  const clock = manualClock();
  const time = { monotonic: 0 };
  const ownership = shardOwnership(
    {
      shards,
      clock,
      logger: silentLogger,
      metrics: countingMetrics().metrics,
      processId: "a",
      drain: async () => {},
      gained: () => {},
      monotonic: () => time.monotonic,
    },
    { leaseMs: 60_000, claimWindowMs: 45_000, renewEveryMs: 10, tickMs: 3_600_000, drainMs: 100 },
  );
  stop = () => ownership.stop();
  return { shards, clock, time, ownership };
}

describe("shard ownership", () => {
  it("a renewal that finds a lease expired (a pause outlived it) stops claiming from that shard at once", async () => {
    const { shards, clock, time, ownership } = owning();
    let renewals = 0;
    const renew = shards.renew.bind(shards);
    shards.renew = async (...args) => {
      const renewed = await renew(...args);
      renewals++;
      return renewed;
    };
    ownership.start();
    await ownership.ready();
    expect(ownership.owned).toBe(SHARD_COUNT);
    expect(ownership.mayClaim(5)).toBe(true);
    // A pause longer than the lease: every lease expired, and another process took shard 5 over.
    clock.advance(61_000);
    time.monotonic += 61_000;
    expect(ownership.mayClaim(5)).toBe(false);
    const far = new Date(clock.now().getTime() + 60_000);
    expect(await shards.acquire([{ shard: 5, generation: 2, owner: "b", expiresAt: far }])).toEqual([5]);
    // The next renewal finds every lease expired: none is renewed, none may be claimed from.
    const seen = renewals;
    await until(() => renewals > seen);
    expect(ownership.mayClaim(5)).toBe(false);
    expect(ownership.mayClaim(6)).toBe(false);
    expect(ownership.owned).toBe(0);
    const heads = new Map((await shards.heads()).map((h) => [h.shard, h]));
    expect(heads.get(5)).toMatchObject({ generation: 2, owner: "b" });
  });

  it("a renewal in time keeps every shard claimable for the claim window", async () => {
    const { clock, time, ownership } = owning();
    ownership.start();
    await ownership.ready();
    clock.advance(40_000);
    time.monotonic += 40_000;
    // A renewal that began after the move extends the window from then.
    const renewedFrom = time.monotonic;
    await new Promise((r) => setTimeout(r, 50));
    time.monotonic = renewedFrom + 44_000;
    expect(ownership.mayClaim(5)).toBe(true);
    expect(ownership.owned).toBe(SHARD_COUNT);
  });
});
