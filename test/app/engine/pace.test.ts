import { describe, expect, it } from "vitest";
import { pacer } from "../../../src/app/engine/pace.ts";
import type { Prepared } from "../../../src/app/engine/work.ts";
import type { DueRequest } from "../../../src/app/ports/deliveries.ts";
import type { Delivery } from "../../../src/domain/delivery.ts";
import { assignShards, shardOf } from "../../../src/domain/shards.ts";
import { SCOPE, sampleMessage, scriptedSender } from "../../support/engine-harness.ts";
import { until } from "../../support/until.ts";
import { harness, setup } from "./engine-suite.ts";

// ADR 16: no window of one period holds more than `count` attempt starts of a rate-limited endpoint, in
// real time (these tests run on the machine's clock), by the engine's own record (attempted_at: the pace
// and the record read one clock). Every assertion on time is such a ceiling, a lower bound on a wait, or
// an order between two endpoints; none depends on how fast the machine is.

/** A sender that answers 200 (or what `fail` says) and notes when each endpoint's request began. */
function timedSender(fail: (url: string) => boolean = () => false) {
  const times = new Map<string, number[]>();
  const sender = scriptedSender((req) => {
    times.set(req.url, [...(times.get(req.url) ?? []), Date.now()]);
    return fail(req.url) ? { ok: false, responseStatus: 500 } : { ok: true, responseStatus: 200 };
  });
  return { sender, times: (url: string) => times.get(url) ?? [] };
}

/** The most values in any window [v, v + windowMs). */
function mostInWindow(values: readonly number[], windowMs: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

/** The smallest gap between consecutive values. */
function tightestPair(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  let least = Number.POSITIVE_INFINITY;
  for (let i = 1; i < sorted.length; i++) least = Math.min(least, sorted[i]! - sorted[i - 1]!);
  return least;
}

const attemptTimes = (history: readonly Delivery[]) =>
  history.flatMap((d) => (d.attemptedAt ? [d.attemptedAt.getTime()] : []));

const LIMITED = "https://limited.example.com/";
const FREE = "https://free.example.com/";

describe("rate limits (ADR 16)", () => {
  it("keeps a limited endpoint's attempts within its limit, evenly; what waits stays pending at attempt 1; an unlimited endpoint is not held back", async () => {
    const { sender, times } = timedSender();
    const t = await setup({ sender, realTime: true });
    const limited = await t.endpoints.create(SCOPE, {
      url: LIMITED,
      events: ["message.sent"],
      rateLimit: { count: 20, per: "second" },
    });
    await t.endpoints.create(SCOPE, { url: FREE, events: ["message.sent"] });
    for (let i = 0; i < 12; i++)
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await until(
      () => times(LIMITED).length >= 2,
      () => `${times(LIMITED).length} sent`,
    );
    // Waiting is not failing: the rest are pending, first attempts, nothing recorded against them.
    const meanwhile = await t.history(limited.endpoint.id);
    expect(meanwhile.filter((d) => d.status === "pending").length).toBeGreaterThan(0);
    expect(meanwhile.every((d) => d.attempt === 1 && d.status !== "failed")).toBe(true);
    await until(
      () => times(LIMITED).length >= 12,
      () => `${times(LIMITED).length} sent`,
    );
    await t.dispatcher.idle();
    const history = await t.history(limited.endpoint.id);
    expect(history).toHaveLength(12);
    expect(history.every((d) => d.status === "succeeded" && d.attempt === 1)).toBe(true);
    // 20 per second, in any second; and evenly: never two within half an interval (25 ms).
    expect(mostInWindow(attemptTimes(history), 1_000)).toBeLessThanOrEqual(20);
    expect(tightestPair(attemptTimes(history))).toBeGreaterThanOrEqual(25);
    // The unlimited endpoint got all twelve before the limited one's third send could start.
    expect(times(FREE)).toHaveLength(12);
    expect(Math.max(...times(FREE))).toBeLessThan(times(LIMITED)[2]!);
  });

  it("starts empty: a new owner's first attempt waits one period after it took the shard", async () => {
    const { sender, times } = timedSender();
    const t = await harness({ sender, realTime: true });
    await t.endpoints.create(SCOPE, {
      url: LIMITED,
      events: ["message.sent"],
      rateLimit: { count: 4, per: "second" },
    });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    const startedAt = Date.now();
    t.dispatcher.start();
    await until(
      () => times(LIMITED).length >= 1,
      () => "nothing sent",
    );
    expect(times(LIMITED)[0]! - startedAt).toBeGreaterThanOrEqual(1_000);
  });

  it("counts retries and manual attempts against the limit, and waiting uses up no retry", async () => {
    const { sender, times } = timedSender(() => true);
    const t = await setup({ sender, realTime: true, options: { retryScheduleMs: [20, 20] } });
    const limited = await t.endpoints.create(SCOPE, {
      url: LIMITED,
      events: ["message.sent"],
      rateLimit: { count: 2, per: "second" },
    });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    // Two events, each tried three times (the first attempt and the schedule's two retries).
    await until(
      () => times(LIMITED).length >= 6,
      () => `${times(LIMITED).length} attempts`,
    );
    await t.dispatcher.idle();
    const failed = (await t.history(limited.endpoint.id)).filter((d) => d.status === "failed");
    expect(failed.map((d) => d.attempt).sort()).toEqual([1, 1, 2, 2, 3, 3]);
    const last = failed.find((d) => d.attempt === 3)!;
    await t.deliveries.retry(SCOPE, last.id);
    await t.deliveries.retry(SCOPE, last.id);
    await until(
      () => times(LIMITED).length >= 8,
      () => `${times(LIMITED).length} attempts`,
    );
    await t.dispatcher.idle();
    const history = await t.history(limited.endpoint.id);
    expect(history.filter((d) => d.trigger === "manual")).toHaveLength(2);
    expect(history).toHaveLength(8);
    // 2 per second in any second, automatic or manual attempts alike.
    expect(mostInWindow(attemptTimes(history), 1_000)).toBeLessThanOrEqual(2);
  });

  it("applies a limit set by a change at once, and sends freely once it is removed", async () => {
    const { sender, times } = timedSender();
    const t = await setup({ sender, realTime: true });
    const { endpoint } = await t.endpoints.create(SCOPE, { url: LIMITED, events: ["message.sent"] });
    await t.endpoints.update(SCOPE, endpoint.id, { rateLimit: { count: 2, per: "second" } });
    for (let i = 0; i < 5; i++)
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await until(
      () => times(LIMITED).length >= 5,
      () => `${times(LIMITED).length} sent`,
    );
    await t.dispatcher.idle();
    expect(mostInWindow(attemptTimes(await t.history(endpoint.id)), 1_000)).toBeLessThanOrEqual(2);
    expect((await t.endpoints.get(SCOPE, endpoint.id)).rateLimit).toEqual({ count: 2, per: "second" });

    await t.endpoints.update(SCOPE, endpoint.id, { rateLimit: null });
    for (let i = 0; i < 6; i++)
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await until(
      () => times(LIMITED).length >= 11,
      () => `${times(LIMITED).length} sent`,
    );
    // Without a limit, the six go together: more than two of them within one second.
    expect(mostInWindow(times(LIMITED).slice(5), 1_000)).toBeGreaterThan(2);
  });

  it("leaves an endpoint out of the claim read while its turns are used up, so its backlog does not fill batches", async () => {
    const { sender, times } = timedSender();
    const t = await harness({ sender, realTime: true, options: { queueSize: 4 } });
    const asked: DueRequest[] = [];
    const due = t.repos.deliveries.due.bind(t.repos.deliveries);
    t.repos.deliveries.due = (r) => {
      asked.push(r);
      return due(r);
    };
    t.dispatcher.start();
    const limited = await t.endpoints.create(SCOPE, {
      url: LIMITED,
      events: ["message.sent"],
      rateLimit: { count: 2, per: "second" },
    });
    await t.endpoints.create(SCOPE, { url: FREE, events: ["message.opened"] });
    for (let i = 0; i < 20; i++)
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await until(
      () => times(LIMITED).length >= 1,
      () => "nothing sent",
    );
    for (let i = 0; i < 12; i++)
      await t.events.publish(SCOPE, { type: "message.opened", data: sampleMessage("delivered") });
    await until(
      () => times(FREE).length >= 12,
      () => `${times(FREE).length} of 12 sent`,
    );
    // Twelve to the free endpoint in reads of four, before the limited one's third send at 2/s.
    expect(times(LIMITED).length).toBeLessThanOrEqual(2);
    expect(asked.some((r) => r.excludeWebhookIds.includes(limited.endpoint.id))).toBe(true);
  });

  it("keeps the limit across a handover: the new owner starts one period after taking the shard", async () => {
    const a = timedSender();
    const b = timedSender();
    const options = { deliveryTimeoutMs: 1_000, leaseMarginMs: 2_000 };
    const first = await setup({ sender: a.sender, realTime: true, owner: "a", options });
    // An endpoint whose shard belongs to "b" once both run.
    const wanted = assignShards(["a", "b"]);
    let id = "";
    const url = LIMITED;
    while (!id) {
      const { endpoint } = await first.endpoints.create(SCOPE, {
        url,
        events: ["message.sent"],
        rateLimit: { count: 5, per: "second" },
      });
      if (wanted.get(shardOf(endpoint.id)) === "b") id = endpoint.id;
      else await first.endpoints.remove(SCOPE, endpoint.id);
    }
    for (let i = 0; i < 25; i++)
      await first.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await until(
      () => a.times(url).length >= 3,
      () => `${a.times(url).length} sent by a`,
    );
    const second = await setup({
      repos: first.repos,
      cipher: first.cipher,
      sender: b.sender,
      realTime: true,
      owner: "b",
      options,
    });
    await until(
      () => a.times(url).length + b.times(url).length >= 25,
      () => `${a.times(url).length} + ${b.times(url).length} of 25 sent`,
    );
    expect(b.times(url).length).toBeGreaterThan(0);
    // Every attempt of "a" came before every attempt of "b": one owner at a time.
    expect(Math.max(...a.times(url))).toBeLessThan(Math.min(...b.times(url)));
    await first.dispatcher.idle();
    await second.dispatcher.idle();
    const history = await first.history(id);
    expect(history.every((d) => d.status === "succeeded" && d.attempt === 1)).toBe(true);
    expect(mostInWindow(attemptTimes(history), 1_000)).toBeLessThanOrEqual(5);
  });
});

describe("the start of a send (ADR 9)", () => {
  it("gives back, unsent, a delivery whose shard this process may no longer start work in when it is ready: preparing it outlived the claim window", () => {
    const started: string[] = [];
    const givenBack: string[] = [];
    const p = pacer(
      {
        clock: { now: () => new Date() },
        tenure: () => ({ generation: 1, since: 0 }),
        // Claimed while the shard was claimable; by the time its reads are done, the window has passed.
        mayStart: () => false,
        start: (w) => started.push(w.delivery.id),
        parked: () => {},
        giveBack: (w) => givenBack.push(w.delivery.id),
        wake: () => {},
      },
      { horizonMs: () => 2_000, maxWaiting: 100 },
    );
    const ready = {
      delivery: { id: "d1", webhookId: "w1" },
      endpoint: { id: "w1", rateLimit: null },
    } as unknown as Prepared;
    p.admit([ready]);
    p.stop();
    expect(started).toEqual([]);
    expect(givenBack).toEqual(["d1"]);
  });
});
