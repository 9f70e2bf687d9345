import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { EventType } from "../../clients/typescript/client.ts";
import type { HeraldProcess } from "../support/herald-process.ts";
import { behaviours, mostAtOnce, type Receiver, startReceiver } from "../support/receiver.ts";
import type { TestStoreKind } from "../support/store.ts";
import {
  createEndpoint,
  type DeliveryWorld,
  deliveryWorld,
  eventBody,
  eventIdOf,
  publishRaw,
  scrapeCounter,
  waitUntil,
} from "./delivery-support.ts";

// ADR 25: a process that dies (SIGKILL) loses its shards as soon as the store knows it is dead (its
// session lock on PostgreSQL, its short heartbeat on MongoDB), not after its lease; a process merely
// frozen (SIGSTOP) past its lease loses them too, and sends nothing of them when it wakes. Two real
// processes, one receiver, events published steadily through the survivor; the receiver counts gaps,
// losses and repeats.
const ENDPOINTS = 8;
const TYPES: EventType[] = ["message.delivered", "message.bounced"];
/** Each request is held this long, so two senders to one endpoint would overlap and show. */
const HOLD_MS = 30;

interface Run {
  world: DeliveryWorld;
  rx: Receiver;
  a: HeraldProcess;
  b: HeraldProcess;
}

let run: Run | null = null;
afterEach(async () => {
  await run?.rx.close().catch(() => {});
  await run?.world.close();
  run = null;
});

async function twoProcesses(kind: TestStoreKind, env: Record<string, string>): Promise<Run> {
  const world = await deliveryWorld(`e2e_failover_${kind}`, env, kind);
  const secrets: string[] = [];
  const rx = await startReceiver({ tls: world.tls, secrets, behaviour: behaviours.slow(HOLD_MS) });
  const [a, b] = await Promise.all([world.start(), world.start()]);
  run = { world, rx, a: a!, b: b! };
  const client = world.client(a!.baseUrl);
  for (let i = 0; i < ENDPOINTS; i++)
    secrets.push((await createEndpoint(client, `${rx.url}/e${i}`, TYPES)).secret);
  // Both own their half before anything is measured.
  await waitUntil(
    async () => {
      const owned = await Promise.all([a!, b!].map((h) => scrapeCounter(h.baseUrl, "herald_shards_owned")));
      return owned[0]! > 0 && owned[1]! > 0 && owned[0]! + owned[1]! === 256;
    },
    () => "both processes own shards",
  );
  return run;
}

/** Publishes through `h` about every `everyMs` until `stop()`; answers the accepted ids. */
function publishing(world: DeliveryWorld, h: HeraldProcess, everyMs: number) {
  const ids = new Set<string>();
  let stopped = false;
  const done = (async () => {
    for (let i = 0; !stopped; i++) {
      const r = await publishRaw(h.baseUrl, world.token, eventBody(TYPES[i % TYPES.length]!), randomUUID());
      expect(r.status).toBe(202);
      ids.add(r.id!);
      await new Promise((res) => setTimeout(res, everyMs));
    }
  })();
  return {
    ids,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/** Every (event, endpoint) pair arrives; answers each pair's arrival times and each endpoint's. */
async function everyPair(r: Run, ids: Set<string>) {
  const arrived = () => r.rx.requests.filter((q) => ids.has(eventIdOf(q)));
  await waitUntil(
    () => new Set(arrived().map((q) => `${q.path} ${eventIdOf(q)}`)).size >= ENDPOINTS * ids.size,
    () =>
      `${new Set(arrived().map((q) => `${q.path} ${eventIdOf(q)}`)).size} of ${ENDPOINTS * ids.size} pairs`,
  );
  expect(r.rx.requests.filter((q) => !q.verdict.ok)).toEqual([]);
  const pairs = new Map<string, number[]>();
  const endpoints = new Map<string, number[]>();
  for (const q of r.rx.requests) {
    const t = q.receivedAt.getTime();
    const key = `${q.path} ${eventIdOf(q)}`;
    pairs.set(key, [...(pairs.get(key) ?? []), t]);
    endpoints.set(q.path, [...(endpoints.get(q.path) ?? []), t]);
  }
  return { pairs, endpoints };
}

/** The longest time each endpoint went without a request, from `from` to `to` (ms since the epoch). */
function longestGaps(endpoints: Map<string, number[]>, from: number, to: number): number[] {
  return [...endpoints.values()].map((times) => {
    const inside = [from, ...times.filter((t) => t > from && t < to).sort((x, y) => x - y), to];
    let most = 0;
    for (let i = 1; i < inside.length; i++) most = Math.max(most, inside[i]! - inside[i - 1]!);
    return most;
  });
}

/** Pairs that arrived more than once although their first arrival was after `t`: sent twice by two owners. */
function repeatedAfter(pairs: Map<string, number[]>, t: number): string[] {
  return [...pairs].filter(([, ts]) => ts.length > 1 && Math.min(...ts) > t).map(([k]) => k);
}

describe.each([
  ["postgres", 5_000],
  ["mongo", 10_000],
] as const)("failover on %s (real processes, HTTPS)", (kind, requiredMs) => {
  it("a SIGKILLed process's endpoints get deliveries again within seconds, not after its lease; nothing lost", async () => {
    // The default lease margin (60 s): before ADR 25 the dead process's endpoints waited all of it.
    const r = await twoProcesses(kind, { HERALD_DELIVERY_TIMEOUT: "3s", HERALD_ENDPOINT_CONCURRENCY: "1" });
    const pub = publishing(r.world, r.a, 50);
    await waitUntil(
      () => r.rx.requests.length >= 10 * ENDPOINTS,
      () => `${r.rx.requests.length} requests`,
    );
    const killedAt = Date.now();
    await r.b.kill();
    await waitUntil(
      () => Date.now() > killedAt + 2 * requiredMs,
      () => "publishing after the kill",
    );
    await pub.stop();
    const stoppedAt = Date.now();
    const { pairs, endpoints } = await everyPair(r, pub.ids);
    const gaps = longestGaps(endpoints, killedAt - 1_000, stoppedAt);
    const longest = Math.max(...gaps);
    const repeats = [...pairs.values()].reduce((n, ts) => n + ts.length - 1, 0);
    const recovered = await scrapeCounter(r.a.baseUrl, "herald_lease_recoveries_total");
    console.log(
      `failover ${kind}: SIGKILL; longest gap per endpoint ${gaps.join(" / ")} ms (required ≤ ${requiredMs}); ` +
        `${pub.ids.size} events × ${ENDPOINTS} all arrived, ${repeats} repeats; shards taken over: ${recovered}`,
    );
    // Taken as a dead process's, not as expired leases (which would have taken 63 s).
    expect(r.a.output()).toContain("took over the shards of a process that died");
    expect(r.a.output()).not.toContain("lease expired");
    expect(recovered).toBeGreaterThan(0);
    expect(longest).toBeLessThan(30_000);
    // Only what the dead process had in flight (sent, not recorded) may arrive again.
    expect(repeatedAfter(pairs, killedAt + 1_000)).toEqual([]);
    expect(mostAtOnce(r.rx.requests)).toBeLessThanOrEqual(1);
  }, 600_000);
});

describe.each(["postgres", "mongo"] as const)("a frozen process on %s (real processes, HTTPS)", (kind) => {
  it("a process stopped (SIGSTOP) past its lease loses its shards, and when it wakes sends nothing it lost", async () => {
    const leaseMs = 2_000 + 4_000;
    const r = await twoProcesses(kind, {
      HERALD_DELIVERY_TIMEOUT: "2s",
      HERALD_LEASE_MARGIN: "4s",
      HERALD_ENDPOINT_CONCURRENCY: "1",
    });
    const pub = publishing(r.world, r.a, 50);
    await waitUntil(
      () => r.rx.requests.length >= 10 * ENDPOINTS,
      () => `${r.rx.requests.length} requests`,
    );
    const frozenAt = Date.now();
    r.b.child.kill("SIGSTOP");
    await waitUntil(
      () => Date.now() > frozenAt + leaseMs + 4_000,
      () => "frozen past the lease",
    );
    // Meanwhile the survivor took every shard.
    expect(await scrapeCounter(r.a.baseUrl, "herald_shards_owned")).toBe(256);
    const wokeAt = Date.now();
    r.b.child.kill("SIGCONT");
    await waitUntil(
      () => Date.now() > wokeAt + 8_000,
      () => "publishing after the wake",
    );
    await pub.stop();
    const { pairs } = await everyPair(r, pub.ids);
    const repeats = [...pairs.values()].reduce((n, ts) => n + ts.length - 1, 0);
    const byB = await scrapeCounter(r.b.baseUrl, "herald_deliveries_total");
    console.log(
      `frozen ${kind}: SIGSTOP ${wokeAt - frozenAt} ms; ${pub.ids.size} events × ${ENDPOINTS} all arrived, ` +
        `${repeats} repeats; attempts counted by the frozen process in all: ${byB}`,
    );
    // Only what it had in flight when it froze may arrive twice: sent before it froze, or started before
    // and written as it woke (at most one per endpoint: its cap). Nothing it started after waking.
    const late = repeatedAfter(pairs, frozenAt + 1_000);
    const lastOf = (k: string) => Math.max(...pairs.get(k)!);
    expect(late.filter((k) => lastOf(k) > wokeAt + 1_000)).toEqual([]);
    expect(late.length).toBeLessThanOrEqual(ENDPOINTS);
    const awake = r.rx.requests.filter((q) => {
      const t = q.receivedAt.getTime();
      return t < wokeAt || t > wokeAt + 1_000;
    });
    expect(mostAtOnce(awake)).toBeLessThanOrEqual(1);
    expect(await r.b.stop()).toBe(0);
  }, 600_000);
});
