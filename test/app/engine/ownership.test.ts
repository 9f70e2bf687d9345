import { afterEach, describe, expect, it } from "vitest";
import { MemoryShards } from "../../../src/adapters/memory/shards.ts";
import { shardOwnership } from "../../../src/app/engine/ownership.ts";
import { silentLogger } from "../../../src/app/logger.ts";
import { assignShards, SHARD_COUNT } from "../../../src/domain/shards.ts";
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
  const time = { monotonic: 0, gained: 0 };
  const ownership = shardOwnership(
    {
      shards,
      clock,
      logger: silentLogger,
      metrics: countingMetrics().metrics,
      processId: "a",
      drain: async () => {},
      gained: () => time.gained++,
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

  it("a renewal that lands after the claim window ran out (a slow store, the leases not expired) makes the shards claimable again and says so", async () => {
    const { shards, clock, time, ownership } = owning();
    ownership.start();
    await ownership.ready();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const renew = shards.renew.bind(shards);
    shards.renew = async (...args) => {
      await gate;
      return renew(...args);
    };
    // A renewal already on its way before the move may land without the gate: wait for the one held back.
    await new Promise((r) => setTimeout(r, 50));
    const gainedBefore = time.gained;
    clock.advance(46_000);
    time.monotonic += 46_000;
    expect(ownership.mayClaim(5)).toBe(false);
    open();
    await until(() => ownership.mayClaim(5));
    // Work let go while the window was out is in the database: the engine is told to read it.
    expect(time.gained).toBe(gainedBefore + 1);
    expect(ownership.owned).toBe(SHARD_COUNT);
  });
});

/** A memory store that tells death as PostgreSQL does: a process is live while its proof is held. */
class SessionShards extends MemoryShards {
  override readonly liveness = "session" as const;
  readonly held = new Set<string>();
  broken = false;
  override async hold(processId: string): Promise<boolean> {
    const was = this.held.has(processId) && !this.broken;
    this.broken = false;
    this.held.add(processId);
    return was;
  }
  override async live(now: Date): Promise<string[]> {
    return (await super.live(now)).filter((p) => this.held.has(p));
  }
  override async leave(processId: string): Promise<void> {
    await super.leave(processId);
    this.held.delete(processId);
  }
}

describe("shard ownership with a proof of life (ADR 25)", () => {
  function sessionOwning(tickMs = 3_600_000) {
    const shards = new SessionShards();
    const clock = manualClock();
    const time = { monotonic: 0 };
    let gained = 0;
    const ownership = shardOwnership(
      {
        shards,
        clock,
        logger: silentLogger,
        metrics: countingMetrics().metrics,
        processId: "a",
        drain: async () => {},
        gained: () => gained++,
        monotonic: () => time.monotonic,
      },
      {
        leaseMs: 60_000,
        claimWindowMs: 45_000,
        renewEveryMs: 3_600_000,
        tickMs,
        drainMs: 100,
        liveness: { everyMs: 10, validMs: 1_500, expiresMs: 0, takeoverWaitMs: 2_000 },
      },
    );
    stop = () => ownership.stop();
    return { shards, time, ownership, gained: () => gained };
  }

  it("takes a dead owner's shards at once, and starts sends in them only after the wait", async () => {
    const { shards, time, ownership } = sessionOwning();
    const far = new Date(Date.now() + 3_600_000);
    // "b" held every shard under a long lease and died: its heartbeat is there, its proof is not.
    await shards.beat("b", far);
    await shards.acquire(
      Array.from({ length: SHARD_COUNT }, (_, shard) => ({
        shard,
        generation: 1,
        owner: "b",
        expiresAt: far,
      })),
    );
    ownership.start();
    await ownership.ready();
    expect(ownership.owned).toBe(SHARD_COUNT);
    expect(ownership.mayClaim(5)).toBe(false);
    expect(ownership.claimable()).toEqual([]);
    time.monotonic += 2_000;
    // The next proof of life (every 10 ms) covers the moved time.
    await until(() => ownership.mayClaim(5));
    expect(ownership.claimable()).toBe(null);
    expect((await shards.heads()).every((h) => h.owner === "a" && h.generation === 2)).toBe(true);
  });

  it("leaves a live owner's shards alone until its lease expires", async () => {
    const { shards, ownership } = sessionOwning();
    const far = new Date(Date.now() + 3_600_000);
    // b is live (heartbeat and proof) and holds a shard the assignment gives to a.
    const mine = [...assignShards(["a", "b"])].filter(([, p]) => p === "a").map(([s]) => s);
    await shards.beat("b", far);
    await shards.hold("b");
    await shards.acquire([{ shard: mine[0]!, generation: 1, owner: "b", expiresAt: far }]);
    ownership.start();
    await ownership.ready();
    expect(ownership.tenure(mine[0]!)).toBe(null);
    expect(ownership.owned).toBe(mine.length - 1);
  });

  it("gives back what a joining process is assigned, and takes it again once that process leaves", async () => {
    const { shards, ownership } = sessionOwning(20);
    ownership.start();
    await ownership.ready();
    expect(ownership.owned).toBe(SHARD_COUNT);
    const mine = [...assignShards(["a", "b"])].filter(([, p]) => p === "a").length;
    const far = new Date(Date.now() + 3_600_000);
    await shards.beat("b", far);
    await shards.hold("b");
    // The rounds see b live: the assignment is made again for the two of them.
    await until(() => ownership.owned === mine);
    await shards.leave("b");
    await until(() => ownership.owned === SHARD_COUNT);
  });

  it("a proof broken (the lock's session ended) counts every shard lost at once; the next rounds take them again", async () => {
    const { shards, ownership } = sessionOwning(20);
    ownership.start();
    await ownership.ready();
    expect(ownership.owned).toBe(SHARD_COUNT);
    expect(ownership.tenure(5)?.generation).toBe(1);
    shards.broken = true;
    await until(() => ownership.tenure(5)?.generation !== 1);
    // Its own leases, unexpired: taken again at once under new generations, not after they expire.
    await until(() => ownership.owned === SHARD_COUNT && ownership.tenure(5)?.generation === 2);
    expect(ownership.mayClaim(5)).toBe(true);
  });

  it("a stop at once gives every shard back and leaves, without waiting for a round on its way", async () => {
    const { shards, ownership } = sessionOwning(20);
    ownership.start();
    await ownership.ready();
    let asked = 0;
    // Rounds from now on are stuck on a store that does not answer.
    shards.heads = () => {
      asked++;
      return new Promise(() => {});
    };
    await until(() => asked > 0);
    await ownership.stop(true);
    // Stopped already: a second stop would wait for the stuck round.
    stop = null;
    const heads = await MemoryShards.prototype.heads.call(shards);
    expect(heads.length).toBe(SHARD_COUNT);
    expect(heads.every((h) => h.expiresAt.getTime() === 0)).toBe(true);
    expect(await shards.live(new Date())).toEqual([]);
  });

  it("a proof another statement carried (a publish) stands in for a check, as the round's does; another process's does not", async () => {
    const { shards, time, ownership } = sessionOwning();
    const heard = new Set<(processId: string, began: number) => void>();
    let checks = 0;
    const hold = shards.hold.bind(shards);
    shards.hold = (id) => {
      checks++;
      return hold(id);
    };
    const proofs = {
      listen(h: (processId: string, began: number) => void) {
        heard.add(h);
        return () => heard.delete(h);
      },
    };
    Object.assign(shards, { proofs });
    ownership.start();
    await ownership.ready();
    await until(() => checks > 1);
    // A publish carried this process's proof, begun now: no check while it is recent (time stands still).
    time.monotonic = 101;
    for (const h of heard) h("a", 101);
    const after = checks;
    await new Promise((r) => setTimeout(r, 60));
    expect(checks).toBe(after);
    // Older than the check's turn: checks again; another process's proof does not stop them.
    time.monotonic = 200;
    for (const h of heard) h("b", 200);
    await until(() => checks > after + 1);
    await ownership.stop();
    stop = null;
    expect(heard.size).toBe(0);
  });
});
