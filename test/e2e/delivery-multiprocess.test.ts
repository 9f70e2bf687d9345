import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Delivery, EventType } from "../../clients/typescript/client.ts";
import type { HeraldProcess } from "../support/herald-process.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import {
  behaviours,
  mostAtOnce,
  type ReceivedRequest,
  type Receiver,
  startReceiver,
} from "../support/receiver.ts";
import {
  allDeliveries,
  createEndpoint,
  type DeliveryWorld,
  deliveryWorld,
  E2E_SCALE,
  eventBody,
  eventIdOf,
  explainArrivals,
  pool,
  publishRaw,
  scrapeCounter,
  seededRandom,
  testSeed,
  waitUntil,
} from "./delivery-support.ts";

// CONTRACT §5 and ADR 9: several Herald processes share one database by owning endpoint shards. Three
// processes share the work (each one's own /metrics shows deliveries) and no (event, endpoint) pair
// reaches a receiver twice; shards move while work flows (a fourth process joins, one stops gracefully)
// and still every pair arrives exactly once; when one is SIGKILLed while it owns shards, the others take
// them over after its lease and deliver everything. Throughout, no endpoint ever has more requests in
// flight than HERALD_ENDPOINT_CONCURRENCY, counted by the receivers across all processes.
const PHASE_EVENTS = Math.round(25 * E2E_SCALE);
/** Enough endpoints that each of three processes owns some of their shards (all but surely). */
const ENDPOINTS = 24;
const ENDPOINT_CAP = 2;
/** Each receiver holds every request this long, so in-flight requests overlap and can be counted. */
const HOLD_MS = 40;
const DELIVERY_TIMEOUT_MS = 3_000;
const LEASE_MARGIN_MS = 5_000;
const LEASE_MS = DELIVERY_TIMEOUT_MS + LEASE_MARGIN_MS;
const TYPES: EventType[] = ["message.delivered", "message.bounced", "domain.verified"];

describe("several processes on one database (real processes, HTTPS)", () => {
  let world: DeliveryWorld;
  const rx: Receiver[] = [];
  const secrets: string[][] = [[], []];
  let herald: HeraldProcess[] = [];
  const endpointIds: string[] = [];
  /** Each endpoint's id by its receiver path. */
  const endpointOf = new Map<string, string>();

  beforeAll(async () => {
    world = await deliveryWorld("e2e_multi", {
      HERALD_DELIVERY_TIMEOUT: `${DELIVERY_TIMEOUT_MS}ms`,
      HERALD_LEASE_MARGIN: `${LEASE_MARGIN_MS}ms`,
      HERALD_ENDPOINT_CONCURRENCY: String(ENDPOINT_CAP),
    });
    for (const s of secrets)
      rx.push(await startReceiver({ tls: world.tls, secrets: s, behaviour: behaviours.slow(HOLD_MS) }));
    herald = await Promise.all([world.start(), world.start(), world.start()]);
    const client = world.client(herald[0]!.baseUrl);
    for (let i = 0; i < ENDPOINTS; i++) {
      const r = i % rx.length;
      const e = await createEndpoint(client, `${rx[r]!.url}/e${i}`, TYPES);
      secrets[r]!.push(e.secret);
      endpointIds.push(e.id);
      endpointOf.set(new URL(`${rx[r]!.url}/e${i}`).pathname, e.id);
    }
  });

  afterAll(async () => {
    await Promise.allSettled(rx.map((r) => r.close()));
    await world?.close();
  });

  /** Publishes round-robin through the processes given; answers the accepted event ids. */
  async function publish(through: HeraldProcess[], count: number): Promise<Set<string>> {
    const ids: string[] = [];
    await pool(Array.from({ length: count }), 6, async (_, i) => {
      const h = through[i % through.length]!;
      const r = await publishRaw(h.baseUrl, world.token, eventBody(TYPES[i % TYPES.length]!), randomUUID());
      expect(r.status).toBe(202);
      ids.push(r.id!);
    });
    return new Set(ids);
  }

  const all = () => rx.flatMap((r) => r.requests);
  const pairOf = (q: ReceivedRequest) => `${q.path} ${eventIdOf(q)}`;
  const arrivals = (ids: Set<string>) => all().filter((q) => ids.has(eventIdOf(q)));
  const distinct = (ids: Set<string>) => new Set(arrivals(ids).map(pairOf)).size;
  const pairs = (ids: Set<string>) => ENDPOINTS * ids.size;
  /** Milliseconds per pair measured in the first test: later deadlines follow the machine's pace. */
  let msPerPair = 100;
  const deadlineFor = (n: number) => Math.max(PATIENCE_MS, 5 * msPerPair * n);

  /** The most requests one endpoint had in flight at once, as its receiver saw them (receiver.ts). */
  const mostInFlight = () => Math.max(...rx.map((r) => mostAtOnce(r.requests)));

  /**
   * Every pair arrived, and each arrival after a pair's first is explained by Herald's own record
   * (explainArrivals): an attempt of the pair that timed out before it, or, given `crashed`, a process
   * killed before recording what it sent. A pair no attempt of which timed out or was cut off by a
   * crash arrived exactly once. Results are recorded a moment after the attempts end, so the records
   * are read until each pair has its success. Answers how many arrivals timeouts explain.
   */
  async function expectEveryPairDelivered(
    ids: Set<string>,
    through: HeraldProcess,
    crashed: (t: number) => boolean = () => false,
  ): Promise<{ repeats: number; byTimeout: number; timedOut: number }> {
    expect(all().filter((q) => !q.verdict.ok)).toEqual([]);
    const seen = arrivals(ids);
    expect(new Set(seen.map(pairOf)).size).toBe(pairs(ids));
    const records = new Map<string, Delivery[]>();
    await waitUntil(
      async () => {
        for (const id of endpointIds) {
          const list = (await allDeliveries(world.client(through.baseUrl), id)).filter((d) =>
            ids.has(d.event_id),
          );
          for (const d of list) records.set(`${id} ${d.event_id}`, []);
          for (const d of list) records.get(`${id} ${d.event_id}`)!.push(d);
          if (list.filter((d) => d.status === "succeeded").length < ids.size) return false;
        }
        return true;
      },
      () => "not every pair is recorded as succeeded",
      { everyMs: 500 },
    );
    const times = new Map<string, number[]>();
    for (const q of seen) {
      const key = `${endpointOf.get(q.path)} ${eventIdOf(q)}`;
      times.set(key, [...(times.get(key) ?? []), q.receivedAt.getTime()]);
    }
    const problems: string[] = [];
    let byTimeout = 0;
    let timedOut = 0;
    for (const [key, ts] of times) {
      const r = explainArrivals(ts, records.get(key) ?? [], crashed);
      problems.push(...r.problems.map((p) => `${key}: ${p}`));
      byTimeout += r.byTimeout;
      timedOut += r.timedOut;
    }
    expect(problems.slice(0, 20)).toEqual([]);
    return { repeats: seen.length - pairs(ids), byTimeout, timedOut };
  }

  it("shares the work between three processes and sends every pair once (again only after an attempt Herald recorded as timed out), within each endpoint's cap", async () => {
    const t0 = Date.now();
    const ids = await publish(herald, PHASE_EVENTS);
    await waitUntil(
      () => distinct(ids) >= pairs(ids),
      () => `${distinct(ids)} of ${pairs(ids)} pairs`,
      { timeoutMs: deadlineFor(pairs(ids)) },
    );
    // A process counts an attempt once it has read the answer, a moment after the receiver saw it.
    let perProcess: number[] = [];
    await waitUntil(
      async () => {
        perProcess = await Promise.all(
          herald.map((h) => scrapeCounter(h.baseUrl, "herald_deliveries_total", 'outcome="succeeded"')),
        );
        return perProcess.reduce((a, b) => a + b, 0) >= pairs(ids);
      },
      () => `succeeded per process: ${perProcess.join(" / ")}`,
    );
    msPerPair = (Date.now() - t0) / pairs(ids);
    const d = await expectEveryPairDelivered(ids, herald[0]!);
    console.log(
      `multiprocess: ${pairs(ids)} pairs in ${Date.now() - t0} ms; succeeded per process (own /metrics): ` +
        `${perProcess.join(" / ")}; most in flight to one endpoint: ${mostInFlight()}; ` +
        `${d.repeats} repeat arrivals, ${d.byTimeout} after the ${d.timedOut} attempts that timed out`,
    );
    // Everybody worked, and every attempt is counted by exactly one process.
    for (const n of perProcess) expect(n).toBeGreaterThan(0);
    expect(perProcess.reduce((a, b) => a + b, 0)).toBe(pairs(ids));
    expect(mostInFlight()).toBeLessThanOrEqual(ENDPOINT_CAP);
  }, 600_000);

  const owned = (hs: HeraldProcess[]) =>
    Promise.all(hs.map((h) => scrapeCounter(h.baseUrl, "herald_shards_owned")));

  it("moves shards while work flows (one joins, one stops gracefully) and still sends every pair once (again only after a recorded timeout)", async () => {
    const t0 = Date.now();
    const joined = await world.start();
    const first = publish([herald[0]!, herald[1]!], Math.ceil(PHASE_EVENTS / 2));
    // The fourth process gets its share from the others while they work (each gives a shard back once
    // its in-flight work there is recorded).
    let shares: number[] = [];
    await waitUntil(
      async () => {
        shares = await owned([...herald, joined]);
        return shares[3]! > 0;
      },
      () => `shards owned: ${shares.join(" / ")}`,
    );
    const second = publish([herald[0]!, herald[1]!, joined], Math.floor(PHASE_EVENTS / 2));
    // One leaves in the middle: SIGTERM gives its shards back at once, after its in-flight work.
    expect(await herald[2]!.stop()).toBe(0);
    const ids = new Set([...(await first), ...(await second)]);
    herald = [herald[0]!, herald[1]!, joined];
    await waitUntil(
      () => distinct(ids) >= pairs(ids),
      () => `${distinct(ids)} of ${pairs(ids)} pairs`,
      { timeoutMs: deadlineFor(pairs(ids)) },
    );
    // Within a few ownership rounds the three left own every shard, in equal shares.
    await waitUntil(
      async () => {
        shares = await owned(herald);
        return shares.reduce((a, b) => a + b, 0) === 256 && shares.every((n) => n >= 84);
      },
      () => `shards owned: ${shares.join(" / ")}`,
    );
    const joinedWork = await scrapeCounter(joined.baseUrl, "herald_deliveries_total", 'outcome="succeeded"');
    const d = await expectEveryPairDelivered(ids, herald[0]!);
    console.log(
      `multiprocess: shards moved under load; ${pairs(ids)} pairs in ${Date.now() - t0} ms, ` +
        `${joinedWork} by the process that joined; shards now ${shares.join(" / ")}; ` +
        `most in flight to one endpoint: ${mostInFlight()}; ` +
        `${d.repeats} repeat arrivals, ${d.byTimeout} after the ${d.timedOut} attempts that timed out`,
    );
    expect(joinedWork).toBeGreaterThan(0);
    expect(mostInFlight()).toBeLessThanOrEqual(ENDPOINT_CAP);
  }, 600_000);

  it("loses nothing when one of the three is SIGKILLed while it owns shards", async () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    const t0 = Date.now();
    const victim = Math.floor(random() * 3);
    const survivors = herald.filter((_, i) => i !== victim);
    const publishing = publish(survivors, PHASE_EVENTS);
    const before = all().length;
    const target = Math.floor(ENDPOINTS * PHASE_EVENTS * (0.2 + 0.4 * random()));
    await waitUntil(
      () => all().length - before >= target,
      () => `${all().length - before} of ${target} requests`,
      { everyMs: 20 },
    );
    const killedAt = Date.now();
    await herald[victim]!.kill();
    const ids = await publishing;
    console.log(
      `multiprocess [seed ${seed}]: SIGKILL process ${victim} at +${killedAt - t0} ms, ${distinct(ids)} pairs received`,
    );
    await waitUntil(
      () => distinct(ids) >= pairs(ids),
      () => `${distinct(ids)} of ${pairs(ids)} pairs`,
      { timeoutMs: deadlineFor(pairs(ids)) },
    );
    // A repeat is explained by a timeout Herald recorded, or by what the killed process had sent but not
    // recorded: it held the lease of what it sent, so it sent it at most LEASE_MS before the kill.
    const d = await expectEveryPairDelivered(
      ids,
      survivors[0]!,
      (t) => t >= killedAt - LEASE_MS - 1_000 && t <= killedAt + 1_000,
    );
    const duplicates = d.repeats;
    // A dead owner's in-flight requests end with it (the receiver still answers them, HOLD_MS later).
    expect(mostInFlight()).toBeLessThanOrEqual(ENDPOINT_CAP);
    const takeovers = await Promise.all(
      survivors.map((h) => scrapeCounter(h.baseUrl, "herald_lease_recoveries_total")),
    );
    console.log(
      `multiprocess: all ${pairs(ids)} pairs delivered ${Date.now() - killedAt} ms after the kill; ` +
        `${duplicates} duplicate arrivals; shards taken over: ${takeovers.join(" / ")}`,
    );
    expect(takeovers.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    let shares: number[] = [];
    await waitUntil(
      async () => {
        shares = await owned(survivors);
        return shares.reduce((a, b) => a + b, 0) === 256 && shares.every((n) => n === 128);
      },
      () => `shards owned: ${shares.join(" / ")}`,
    );
    for (const h of survivors) expect(await h.stop()).toBe(0);
  }, 600_000);
});
