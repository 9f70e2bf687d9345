import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventType, WebhookWithSecret } from "../../clients/typescript/client.ts";
import { behaviours, type ReceivedRequest, type Receiver, startReceiver } from "../support/receiver.ts";
import {
  allDeliveries,
  createEndpoint,
  type DeliveryWorld,
  deliveryWorld,
  E2E_SCALE,
  eventBody,
  eventIdOf,
  pool,
  publishRaw,
  waitUntil,
} from "./delivery-support.ts";

// Issue 3: SIGTERM under load. The process stops claiming, finishes (or gives back) what is in
// flight within its grace period (HERALD_DELIVERY_TIMEOUT + 2 s), exits 0, and leaves nothing
// stranded under its lease: the next process delivers everything owed at once, long before the
// default 60 s lease margin could have let it take over expired leases.
const EVENTS = Math.round(80 * E2E_SCALE);
const TIMEOUT_MS = 3_000;
const GRACE_MS = TIMEOUT_MS + 2_000;
const ENDPOINT_CONCURRENCY = 5;
const TYPES: EventType[] = ["message.sent", "message.delivered"];

describe("graceful stop: SIGTERM under load (real processes, HTTPS)", () => {
  let world: DeliveryWorld;
  const rx: Receiver[] = [];
  const secrets: string[][] = [[], []];

  beforeAll(async () => {
    world = await deliveryWorld("e2e_graceful", {
      HERALD_DELIVERY_TIMEOUT: `${TIMEOUT_MS}ms`,
      HERALD_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
      // HERALD_LEASE_MARGIN stays at its default (60s): nothing here may wait for a lease to expire.
    });
    // Slow receivers, so there is always work in flight; every 6th request never answers (a timeout).
    const slow = (req: Omit<ReceivedRequest, "behaviour">) =>
      req.index % 6 === 5 ? behaviours.hang() : behaviours.slow(400 + ((req.index * 37) % 400));
    for (const s of secrets) rx.push(await startReceiver({ tls: world.tls, secrets: s, behaviour: slow }));
  });

  afterAll(async () => {
    await Promise.allSettled(rx.map((r) => r.close()));
    await world?.close();
  });

  it("stops claiming, finishes in-flight work within the grace period, exits 0, and loses nothing", async () => {
    const first = await world.start();
    const client = world.client(first.baseUrl);
    const endpoints: WebhookWithSecret[] = [];
    for (const [i, r] of rx.entries()) {
      const e = await createEndpoint(client, r.url, TYPES);
      secrets[i]!.push(e.secret);
      endpoints.push(e);
    }
    const ids: string[] = [];
    await pool(Array.from({ length: EVENTS }), 8, async (_, i) => {
      const r = await publishRaw(first.baseUrl, world.token, eventBody(TYPES[i % 2]!), randomUUID());
      expect(r.status).toBe(202);
      ids.push(r.id!);
    });
    const received = () => rx.reduce((n, r) => n + r.requests.length, 0);
    await waitUntil(
      () => received() >= EVENTS * 0.5,
      () => `${received()} requests so far`,
      { everyMs: 20 },
    );

    const sigterm = Date.now();
    const before = received();
    const code = await first.stop(30_000);
    const exitMs = Date.now() - sigterm;
    const during = received() - before;
    console.log(
      `graceful: SIGTERM with ${before} of ${2 * EVENTS} requests received; exit ${code} after ${exitMs} ms ` +
        `(grace ${GRACE_MS} ms); ${during} requests arrived during the shutdown`,
    );
    expect(code).toBe(0);
    expect(exitMs).toBeLessThan(GRACE_MS + 5_000);
    // It stopped claiming: at most what was in flight plus one claim already on its way (both
    // bounded by the per-endpoint cap), not the backlog.
    expect(during).toBeLessThanOrEqual(2 * 2 * ENDPOINT_CONCURRENCY);

    // What was in flight at the SIGTERM (received, not yet answered) was finished and recorded by the
    // stopping process: each such (event, endpoint) has as many finished records as requests so far.
    const inFlight = rx.flatMap((r, i) =>
      r.requests
        .filter((q) => {
          const t = q.receivedAt.getTime();
          if (t > sigterm) return false;
          return (
            (q.behaviour.kind === "hang" && t + TIMEOUT_MS > sigterm) ||
            (q.behaviour.kind === "respond" && t + (q.behaviour.delayMs ?? 0) > sigterm)
          );
        })
        .map((q) => ({ eventId: eventIdOf(q), endpoint: endpoints[i]!.id, receiver: r })),
    );
    expect(inFlight.length).toBeGreaterThan(0);
    for (const f of inFlight) {
      const sent = f.receiver.requests.filter(
        (q) => eventIdOf(q) === f.eventId && q.receivedAt.getTime() <= sigterm,
      );
      const [{ finished } = { finished: 0 }] = await world.sql<{ finished: number }[]>`
        SELECT count(*)::int AS finished FROM deliveries
        WHERE event_id = ${f.eventId} AND webhook_id = ${f.endpoint} AND status IN ('succeeded', 'failed')`;
      expect(finished, `${f.eventId} to ${f.endpoint}`).toBeGreaterThanOrEqual(sent.length);
    }

    // Nothing is left under a lease: the stopping process gave back every shard it held (ADR 9), so
    // what it did not finish waits for no expiry.
    const held = (await world.repos.shards.heads()).filter((l) => l.expiresAt.getTime() > Date.now());
    expect(held).toEqual([]);
    const [{ pendingLeft } = { pendingLeft: 0 }] = await world.sql<{ pendingLeft: number }[]>`
      SELECT count(*)::int AS "pendingLeft" FROM deliveries WHERE status = 'pending'`;

    // The next process delivers everything owed, with no lease to wait for.
    for (const r of rx) r.setBehaviour(behaviours.verify);
    const restarted = Date.now();
    const second = await world.start();
    const owed = new Set(ids);
    const answered = (q: ReceivedRequest) => q.behaviour.kind === "respond" && q.behaviour.status === 200;
    const done = () =>
      rx.every((r) => new Set(r.requests.filter(answered).map(eventIdOf)).size === owed.size);
    await waitUntil(done, () => `${received()} requests so far`);
    console.log(
      `graceful: ${inFlight.length} requests in flight at the SIGTERM, all recorded by the stopping process; ${pendingLeft} pending deliveries after the stop, all delivered ${Date.now() - restarted} ms after the restart`,
    );

    for (const [i, r] of rx.entries()) {
      expect(r.requests.filter((q) => !q.verdict.ok)).toEqual([]);
      expect(new Set(r.requests.map(eventIdOf))).toEqual(owed);
      // The last results may still be on their way to the database.
      let list: Awaited<ReturnType<typeof allDeliveries>> = [];
      const succeeded = () => new Set(list.filter((d) => d.status === "succeeded").map((d) => d.event_id));
      await waitUntil(
        async () => {
          list = await allDeliveries(world.client(second.baseUrl), endpoints[i]!.id);
          return succeeded().size === owed.size;
        },
        () => `${succeeded().size} of ${owed.size} recorded as succeeded`,
        { everyMs: 250 },
      );
      expect(succeeded()).toEqual(owed);
      // Every attempt is recorded: the hung ones as timeouts, followed by a later success.
      for (const d of list) expect(["succeeded", "failed"]).toContain(d.status);
      for (const d of list.filter((x) => x.status === "failed")) {
        expect(d.error).toBe("timeout");
        expect(d.next_attempt_at).not.toBeNull();
      }
    }
    expect(await second.stop()).toBe(0);
  });
});
