import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventType } from "../../clients/typescript/client.ts";
import type { HeraldProcess } from "../support/herald-process.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { behaviours, type Receiver, startReceiver } from "../support/receiver.ts";
import {
  allDeliveries,
  createEndpoint,
  type DeliveryWorld,
  deliveryWorld,
  E2E_SCALE,
  eventBody,
  eventIdOf,
  PROGRESS_TEST_TIMEOUT_MS,
  pool,
  publishRaw,
  scrapeCounter,
  seededRandom,
  testSeed,
  waitForProgress,
  waitUntil,
} from "./delivery-support.ts";

// Issue 3 / CONTRACT §5: several Herald processes may share one database; each due delivery is
// attempted by one of them at a time. Three processes on one database share the work (each one's
// own /metrics shows deliveries), no (event, endpoint) pair reaches a receiver twice while nobody
// crashes, and when one of them is SIGKILLed mid-way the other two deliver everything it held.
const PHASE_EVENTS = Math.round(100 * E2E_SCALE);
const DELIVERY_TIMEOUT_MS = 3_000;
// Long enough that a busy machine's slowest result write lands well inside the lease, so a repeat can
// only come from the kill, not from a lease that ran out under a live process.
const LEASE_MARGIN_MS = 15_000;
const LEASE_MS = DELIVERY_TIMEOUT_MS + LEASE_MARGIN_MS;
const TYPES: EventType[] = ["message.delivered", "message.bounced", "domain.verified"];

describe("several processes on one database (real processes, HTTPS)", () => {
  let world: DeliveryWorld;
  const rx: Receiver[] = [];
  const secrets: string[][] = [[], []];
  let herald: HeraldProcess[] = [];
  const endpointIds: string[] = [];

  beforeAll(async () => {
    world = await deliveryWorld("e2e_multi", {
      HERALD_DELIVERY_TIMEOUT: `${DELIVERY_TIMEOUT_MS}ms`,
      HERALD_LEASE_MARGIN: `${LEASE_MARGIN_MS}ms`,
    });
    // A little latency, so the processes' sends overlap in time.
    for (const s of secrets)
      rx.push(await startReceiver({ tls: world.tls, secrets: s, behaviour: behaviours.slow(30) }));
    herald = await Promise.all([world.start(), world.start(), world.start()]);
    const client = world.client(herald[0]!.baseUrl);
    for (const [i, r] of rx.entries()) {
      const e = await createEndpoint(client, r.url, TYPES);
      secrets[i]!.push(e.secret);
      endpointIds.push(e.id);
    }
  });

  afterAll(async () => {
    await Promise.allSettled(rx.map((r) => r.close()));
    await world?.close();
  });

  /** Publishes round-robin through the processes given; answers the accepted event ids. */
  async function publish(through: HeraldProcess[], count: number): Promise<string[]> {
    const ids: string[] = [];
    await pool(Array.from({ length: count }), 9, async (_, i) => {
      const h = through[i % through.length]!;
      const r = await publishRaw(h.baseUrl, world.token, eventBody(TYPES[i % TYPES.length]!), randomUUID());
      expect(r.status).toBe(202);
      ids.push(r.id!);
    });
    return ids;
  }

  const arrivals = (r: Receiver, ids: Set<string>) => r.requests.filter((q) => ids.has(eventIdOf(q)));
  const distinct = (ids: Set<string>) =>
    rx.reduce((n, r) => n + new Set(arrivals(r, ids).map(eventIdOf)).size, 0);

  it(
    "shares the work between three processes and sends every pair exactly once",
    async () => {
      const t0 = Date.now();
      const ids = new Set(await publish(herald, PHASE_EVENTS));
      await waitForProgress(
        () => distinct(ids),
        2 * PHASE_EVENTS,
        (n) => `${n} of ${2 * PHASE_EVENTS} pairs`,
      );
      // A process counts an attempt once it has read the answer, a moment after the receiver saw it.
      let perProcess: number[] = [];
      await waitUntil(
        async () => {
          perProcess = await Promise.all(
            herald.map((h) => scrapeCounter(h.baseUrl, "herald_deliveries_total", 'outcome="succeeded"')),
          );
          return perProcess.reduce((a, b) => a + b, 0) >= 2 * PHASE_EVENTS;
        },
        PATIENCE_MS,
        () => `succeeded per process: ${perProcess.join(" / ")}`,
      );
      const receipts = rx.reduce((n, r) => n + arrivals(r, ids).length, 0);
      console.log(
        `multiprocess: ${2 * PHASE_EVENTS} pairs in ${Date.now() - t0} ms, ${receipts} requests; ` +
          `succeeded per process (own /metrics): ${perProcess.join(" / ")}`,
      );
      for (const r of rx) {
        expect(r.requests.filter((q) => !q.verdict.ok)).toEqual([]);
        // Each pair exactly once: no two processes ever sent the same delivery.
        expect(arrivals(r, ids).length).toBe(PHASE_EVENTS);
        expect(new Set(arrivals(r, ids).map(eventIdOf))).toEqual(ids);
      }
      // Everybody worked, and every attempt is counted by exactly one process.
      for (const n of perProcess) expect(n).toBeGreaterThan(0);
      expect(perProcess.reduce((a, b) => a + b, 0)).toBe(2 * PHASE_EVENTS);
    },
    PROGRESS_TEST_TIMEOUT_MS,
  );

  it(
    "loses nothing when one of the three is SIGKILLed mid-way",
    async () => {
      const seed = testSeed();
      const random = seededRandom(seed);
      const t0 = Date.now();
      const ids = new Set(await publish(herald, PHASE_EVENTS));
      const victim = Math.floor(random() * 3);
      const target = Math.floor(2 * PHASE_EVENTS * (0.2 + 0.4 * random()));
      await waitForProgress(
        () => distinct(ids),
        target,
        (n) => `${n} of ${target} pairs`,
        { everyMs: 20 },
      );
      const killedAt = Date.now();
      await herald[victim]!.kill();
      // Whatever the victim had written to a socket was read by now, give or take the receiver's parsing.
      const killConfirmedAt = Date.now();
      console.log(
        `multiprocess [seed ${seed}]: SIGKILL process ${victim} at +${killedAt - t0} ms, ${distinct(ids)} of ${2 * PHASE_EVENTS} pairs received`,
      );
      const survivors = herald.filter((_, i) => i !== victim);
      await waitForProgress(
        () => distinct(ids),
        2 * PHASE_EVENTS,
        (n) => `${n} of ${2 * PHASE_EVENTS} pairs`,
      );
      let duplicates = 0;
      const unexplained: string[] = [];
      for (const r of rx) {
        expect(r.requests.filter((q) => !q.verdict.ok)).toEqual([]);
        expect(new Set(arrivals(r, ids).map(eventIdOf))).toEqual(ids);
        const times = new Map<string, number[]>();
        for (const q of arrivals(r, ids))
          times.set(eventIdOf(q), [...(times.get(eventIdOf(q)) ?? []), q.receivedAt.getTime()]);
        for (const [id, ts] of times) {
          duplicates += ts.length - 1;
          // A repeat only for what the killed process had sent but not yet recorded.
          for (const t of ts.slice(0, -1))
            if (t < killedAt - LEASE_MS - 1_000 || t > killConfirmedAt + 1_000) unexplained.push(id);
        }
      }
      expect(unexplained).toEqual([]);
      // Every pair is recorded as succeeded (the last results may still be on their way).
      await waitForProgress(
        async () => {
          let n = 0;
          for (const id of endpointIds) {
            const ok = await allDeliveries(world.client(survivors[0]!.baseUrl), id, "succeeded");
            n += ok.filter((d) => ids.has(d.event_id)).length;
          }
          return n;
        },
        endpointIds.length * PHASE_EVENTS,
        (n) => `${n} of ${endpointIds.length * PHASE_EVENTS} pairs recorded as succeeded`,
        { everyMs: 500 },
      );
      console.log(
        `multiprocess: all ${2 * PHASE_EVENTS} pairs delivered ${Date.now() - killedAt} ms after the kill; ${duplicates} duplicate arrivals`,
      );
      for (const h of survivors) expect(await h.stop()).toBe(0);
    },
    PROGRESS_TEST_TIMEOUT_MS,
  );
});
