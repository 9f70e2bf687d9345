import { describe, expect, it } from "vitest";
import { SCOPE, sampleMessage, scriptedSender } from "../../support/engine-harness.ts";
import { until } from "../../support/until.ts";
import { harness, setup } from "./engine-suite.ts";

// Claiming due work: a read, not a lease; a publish's deliveries queued without a read; a read per queue's worth.

describe("claiming", () => {
  it("a claim of 10 due deliveries for one idle endpoint with a cap of 10 sends all 10 and gives none back", async () => {
    const held: (() => void)[] = [];
    const sender = scriptedSender(
      () => new Promise((r) => held.push(() => r({ ok: true, responseStatus: 200 }))),
    );
    const t = await harness({ sender, options: { endpointConcurrency: 10, concurrency: 50 } });
    await t.endpoints.create(SCOPE, { url: "https://x.example.com/", events: ["message.sent"] });
    for (let i = 0; i < 10; i++)
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    // Claiming is a read; nothing is written until results are recorded (no lease, nothing given back).
    const reads: number[] = [];
    const due = t.repos.deliveries.due.bind(t.repos.deliveries);
    t.repos.deliveries.due = async (r) => {
      const got = await due(r);
      reads.push(got.length);
      return got;
    };
    const written: string[] = [];
    const record = t.repos.deliveries.record.bind(t.repos.deliveries);
    t.repos.deliveries.record = async (results) => {
      written.push(...results.map((r) => r.status));
      await record(results);
    };
    t.dispatcher.start();
    await until(
      () => held.length >= 10,
      () => `${held.length} of 10 sends held`,
    );
    expect(held).toHaveLength(10);
    expect(reads[0]).toBe(10);
    expect(written).toEqual([]);
    for (const go of held.splice(0)) go();
    await t.drain();
    expect(written).toEqual(Array(10).fill("succeeded"));
    expect(t.sender.requests).toHaveLength(10);
  });

  it("queues what a publish in this process stored without reading it or its event, within the cap and the lane's depth; the rest is read once the lane runs low", async () => {
    const held: (() => void)[] = [];
    const sender = scriptedSender(
      () => new Promise((r) => held.push(() => r({ ok: true, responseStatus: 200 }))),
    );
    const t = await setup({ sender, options: { endpointConcurrency: 2, concurrency: 50, queueDepth: 20 } });
    await t.endpoints.create(SCOPE, { url: "https://x.example.com/", events: ["message.sent"] });
    await t.dispatcher.idle(); // its shards are taken
    let eventReads = 0;
    const getMany = t.repos.events.getMany.bind(t.repos.events);
    t.repos.events.getMany = async (ids) => {
      eventReads++;
      return getMany(ids);
    };
    const reads: number[] = [];
    const due = t.repos.deliveries.due.bind(t.repos.deliveries);
    t.repos.deliveries.due = async (r) => {
      const got = await due(r);
      reads.push(got.length);
      return got;
    };
    // Twelve stored: two go out (the cap), ten wait in the endpoint's lane (its depth is 20), none read.
    await Promise.all(
      Array.from({ length: 12 }, () =>
        t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") }),
      ),
    );
    const readSoFar = () => reads.reduce((a, b) => a + b, 0);
    await until(() => held.length === 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(held).toHaveLength(2);
    expect(readSoFar()).toBe(0);
    // Fifteen more: the lane keeps ten (up to its depth of 20), five stay pending for a read.
    for (let i = 0; i < 15; i++)
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await new Promise((r) => setTimeout(r, 50));
    expect(readSoFar()).toBe(0);
    expect(held).toHaveLength(2);
    // Once the lane runs low, the rest is read; everything arrives once, and no event was read back.
    while (t.sender.requests.length < 27 || held.length > 0) {
      for (const go of held.splice(0)) go();
      await new Promise((r) => setTimeout(r, 5));
    }
    await t.drain();
    expect(t.sender.requests).toHaveLength(27);
    expect(new Set(t.sender.requests.map((r) => r.eventId)).size).toBe(27);
    expect(readSoFar()).toBe(5);
    expect(eventReads).toBe(0);
  });

  it("reads the database once per queue's worth, not once per freed slot, and never exceeds the cap", async () => {
    let inFlight = 0;
    let most = 0;
    const sender = scriptedSender(async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 1));
      inFlight--;
      return { ok: true, responseStatus: 200 };
    });
    const t = await harness({
      sender,
      options: { endpointConcurrency: 10, concurrency: 50, queueDepth: 100 },
    });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    for (let i = 0; i < 300; i++)
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    const reads: number[] = [];
    const due = t.repos.deliveries.due.bind(t.repos.deliveries);
    t.repos.deliveries.due = async (r) => {
      const got = await due(r);
      reads.push(got.length);
      return got;
    };
    t.dispatcher.start();
    await t.drain();
    expect((await t.repos.deliveries.countPending([endpoint.id])).get(endpoint.id)).toBe(0);
    expect(t.sender.requests).toHaveLength(300);
    expect(new Set(t.sender.requests.map((r) => r.eventId)).size).toBe(300);
    expect(most).toBeLessThanOrEqual(10);
    // A claim per freed slot would read about 30 times (ten at a time); the queue reads a lane's worth.
    expect(reads.length).toBeLessThanOrEqual(8);
    expect(reads[0]).toBe(100);
  });
});
