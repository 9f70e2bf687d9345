import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unwrap, type WebhookWithSecret } from "../../clients/typescript/client.ts";
import { shardOf } from "../../src/domain/shards.ts";
import type { HeraldProcess } from "../support/herald-process.ts";
import {
  type Behaviour,
  mostAtOnce,
  type ReceivedRequest,
  type Receiver,
  startReceiver,
} from "../support/receiver.ts";
import {
  type DeliveryWorld,
  deliveryWorld,
  eventBody,
  eventIdOf,
  publishRaw,
  scrapeCounter,
  waitForProgress,
  waitUntil,
} from "./delivery-support.ts";

// ADR 16: an endpoint with ordering "fifo" receives its events in the order Herald accepted them, one
// at a time, across processes and crashes. Three processes; four FIFO endpoints (their shards spread
// over the processes); events published one after the other through the processes in turn; the
// receiver fails the first attempt of every seventh event, and holds each request a moment so overlaps
// would show. Half-way, the process owning one endpoint's shard is SIGKILLed; its shards are taken
// over once its lease expires. Per endpoint, what arrived must be exactly the published order, each
// event repeated only right after itself (a failed attempt's retry, or the resend of the attempt the
// killed process had in flight), never skipped or reordered; and never two requests in flight at once.
const ENDPOINTS = 4;
const EVENTS = 30;
const HOLD_MS = 30;
const DELIVERY_TIMEOUT_MS = 3_000;
const LEASE_MARGIN_MS = 5_000;
/** The event whose first attempt at the first endpoint is in flight when its owner is SIGKILLed. */
const CRASH_AT = 15;

describe("ordered delivery across processes and a crash (real processes, HTTPS)", () => {
  let world: DeliveryWorld;
  let rx: Receiver;
  const secrets: string[] = [];
  let herald: HeraldProcess[] = [];
  const endpoints: WebhookWithSecret[] = [];
  /** Published event ids, in order. */
  const published: string[] = [];
  const attempts = new Map<string, number>();
  let failEverything = false;

  beforeAll(async () => {
    world = await deliveryWorld("e2e_fifo", {
      HERALD_DELIVERY_TIMEOUT: `${DELIVERY_TIMEOUT_MS}ms`,
      HERALD_LEASE_MARGIN: `${LEASE_MARGIN_MS}ms`,
    });
    rx = await startReceiver({
      tls: world.tls,
      secrets,
      behaviour: (req): Behaviour => {
        const key = `${req.path} ${eventIdOf(req as ReceivedRequest)}`;
        const n = (attempts.get(key) ?? 0) + 1;
        attempts.set(key, n);
        const index = published.indexOf(eventIdOf(req as ReceivedRequest));
        const fail = failEverything || (index % 7 === 3 && n === 1);
        // The crash's event is held at the first endpoint long enough to be in flight when its sender dies.
        const hold = req.path === "/f0" && index === CRASH_AT && n === 1 ? 5_000 : HOLD_MS;
        return { kind: "respond", status: fail ? 500 : 200, body: "x", delayMs: hold };
      },
    });
    herald = await Promise.all([0, 1, 2].map((n) => world.start({ HOSTNAME: `p${n}` })));
    const client = world.client(herald[0]!.baseUrl);
    for (let i = 0; i < ENDPOINTS; i++) {
      const e = await unwrap(
        client.POST("/api/v1/webhooks", {
          body: { url: `${rx.origin}/f${i}`, events: ["message.delivered"], ordering: "fifo" },
        }),
      );
      secrets.push(e.secret);
      endpoints.push(e);
    }
  });

  afterAll(async () => {
    await rx?.close();
    await world?.close();
  });

  async function ownerOf(endpointId: string): Promise<string> {
    const lease = (await world.repos.shards.heads()).find((l) => l.shard === shardOf(endpointId));
    return lease!.owner.split(":")[0]!;
  }

  const arrivedAt = (path: string) => rx.requests.filter((r) => r.path === path);
  /** Distinct events the endpoint answered 200 to. */
  const succeeded = (path: string) =>
    new Set(
      arrivedAt(path)
        .filter((r) => r.behaviour.kind === "respond" && r.behaviour.status === 200)
        .map((r) => eventIdOf(r)),
    ).size;

  /** Publishes one event through the given process and waits for its answer: acceptance order is publish order. */
  async function publishOne(h: HeraldProcess): Promise<string> {
    const r = await publishRaw(h.baseUrl, world.token, eventBody("message.delivered"), randomUUID());
    expect(r.status).toBe(202);
    return r.id!;
  }

  it("delivers every FIFO endpoint's events in acceptance order, one at a time, through a SIGKILL", async () => {
    // The shards settle first: three processes started together rebalance for a few seconds, and the
    // owner read while one is still handing shards over may not be the owner once the events flow.
    await waitUntil(
      async () => {
        const now = Date.now();
        const heads = await world.repos.shards.heads();
        const owners = new Set(heads.map((l) => l.owner.split(":")[0]));
        return owners.size === herald.length && heads.every((l) => l.expiresAt.getTime() > now);
      },
      () => "every process owning shards, none in hand-over",
    );
    const victimName = await ownerOf(endpoints[0]!.id);
    const victim = herald[Number(victimName.slice(1))]!;
    const survivors = herald.filter((h) => h !== victim);
    let killedAt = 0;
    for (let i = 0; i < EVENTS; i++) {
      // Through every process in turn; once the victim is dead, through the others.
      const through = killedAt ? survivors[i % survivors.length]! : herald[i % herald.length]!;
      published.push(await publishOne(through));
      if (i === CRASH_AT) {
        // Half-way, while the first endpoint's receiver holds this event's request, its sender dies.
        await waitUntil(
          () => arrivedAt("/f0").some((r) => eventIdOf(r) === published[CRASH_AT]),
          () => `${arrivedAt("/f0").length} at /f0, not the crash's event`,
        );
        await victim.kill();
        killedAt = Date.now();
      }
    }
    for (const [i] of endpoints.entries()) {
      await waitForProgress(
        () => succeeded(`/f${i}`),
        EVENTS,
        (n) => `${n} of ${EVENTS} succeeded at /f${i}`,
      );
    }
    const takeovers = await Promise.all(
      survivors.map((h) => scrapeCounter(h.baseUrl, "herald_lease_recoveries_total")),
    );
    for (const [i] of endpoints.entries()) {
      const got = arrivedAt(`/f${i}`);
      const order = got.map((r) => eventIdOf(r));
      // Consecutive repeats collapsed, what arrived is exactly the published order.
      const collapsed = order.filter((id, k) => k === 0 || order[k - 1] !== id);
      expect(collapsed, `order at /f${i}`).toEqual(published);
      // One in flight at a time: none arrived before the one ahead of it was answered.
      expect(mostAtOnce(got), `requests in flight together at /f${i}`).toBe(1);
      const repeats = order.length - collapsed.length;
      console.log(
        `fifo /f${i}: ${order.length} requests for ${EVENTS} events, ${repeats} repeats (retries and resends)`,
      );
    }
    expect(rx.requests.filter((r) => !r.verdict.ok)).toEqual([]);
    // The attempt in flight at the crash was never recorded: the next owner sent that event again, right
    // after itself, once the lease had expired.
    const resent = arrivedAt("/f0").filter((r) => eventIdOf(r) === published[CRASH_AT]);
    expect(resent.length).toBeGreaterThanOrEqual(2);
    expect(resent[1]!.receivedAt.getTime()).toBeGreaterThan(killedAt);
    console.log(`fifo: ${victimName} SIGKILLed mid-stream; shards taken over: ${takeovers.join(" / ")}`);
    expect(takeovers.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    herald = survivors;
  }, 600_000);

  it("holds the events after a failing one, shows the held count in the API and the metrics, and releases them in order", async () => {
    const client = world.client(herald[0]!.baseUrl);
    const e = endpoints[1]!;
    const path = "/f1";
    const before = arrivedAt(path).length;
    failEverything = true;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await publishOne(herald[i % herald.length]!));
    // The first of them fails again and again; the four after it wait behind it.
    await waitUntil(
      () => arrivedAt(path).length - before >= 2,
      () => `${arrivedAt(path).length - before} attempts`,
    );
    const held = async () =>
      (await unwrap(client.GET("/api/v1/webhooks/{id}", { params: { path: { id: e.id } } }))).held;
    // Four behind the failing one (read again while a retry is being written: one more for a moment).
    await waitUntil(
      async () => (await held()) === 4,
      () => "held is not 4",
    );
    expect(
      new Set(
        arrivedAt(path)
          .slice(before)
          .map((r) => eventIdOf(r)),
      ),
    ).toEqual(new Set([ids[0]]));
    expect(await scrapeCounter(herald[0]!.baseUrl, "herald_fifo_held")).toBeGreaterThanOrEqual(4);
    failEverything = false;
    await waitForProgress(
      () =>
        new Set(
          arrivedAt(path)
            .slice(before)
            .map((r) => eventIdOf(r)),
        ).size,
      5,
      (n) => `${n} of 5 events at ${path}`,
    );
    const order = arrivedAt(path)
      .slice(before)
      .map((r) => eventIdOf(r));
    expect(order.filter((id, k) => k === 0 || order[k - 1] !== id)).toEqual(ids);
    await waitUntil(
      async () => (await held()) === 0,
      () => "still held",
    );
  }, 600_000);
});
