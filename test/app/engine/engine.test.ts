import { afterEach, describe, expect, it } from "vitest";
import { createMemoryRepositories } from "../../../src/adapters/memory/repositories.ts";
import { assignShards, shardOf } from "../../../src/domain/shards.ts";
import { engineHarness, SCOPE, sampleMessage, scriptedSender } from "../../support/engine-harness.ts";
import { until } from "../../support/until.ts";

type Harness = Awaited<ReturnType<typeof engineHarness>>;
let h: Harness | null = null;
afterEach(async () => {
  await h?.dispatcher.stop(1_000);
  h = null;
});

async function setup(...args: Parameters<typeof engineHarness>) {
  h = await engineHarness(...args);
  h.dispatcher.start();
  return h;
}

describe("dispatcher", () => {
  it("sends a published event at once, signed with the endpoint's secret, and records success", async () => {
    const t = await setup();
    const { endpoint, secret } = await t.endpoints.create(SCOPE, {
      url: "https://hooks.example.com/a",
      events: ["message.delivered"],
    });
    const published = await t.events.publish(SCOPE, { type: "message.delivered", data: sampleMessage() });
    expect(published.endpoints).toBe(1);
    await t.drain();
    expect(t.sender.requests).toHaveLength(1);
    const req = t.sender.requests[0]!;
    expect(req.url).toBe(endpoint.url);
    expect(req.eventId).toBe(published.envelope.id);
    expect(JSON.parse(req.body)).toEqual(published.envelope);
    expect(req.secrets).toEqual([secret]);
    const [d] = await t.history(endpoint.id);
    expect(d).toMatchObject({ status: "succeeded", attempt: 1, trigger: "automatic", responseStatus: 200 });
    expect(d?.attemptedAt).not.toBeNull();
  });

  it("retries a failure on the schedule, then gives up after the last retry", async () => {
    const t = await setup({
      sender: scriptedSender(() => ({ ok: false, responseStatus: 500, error: "http_status" })),
    });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    let history = await t.history(endpoint.id);
    expect(history.map((d) => [d.attempt, d.status])).toEqual([
      [1, "failed"],
      [2, "pending"],
    ]);
    // random() is 0.5, so the jitter is zero: the second attempt is due exactly 5 s later.
    expect(history[1]!.scheduledAt.getTime() - history[0]!.attemptedAt!.getTime()).toBe(5_000);
    expect(history[0]!.nextAttemptAt?.getTime()).toBe(history[1]!.scheduledAt.getTime());

    t.clock.advance(4_999);
    await t.drain();
    expect(t.sender.requests).toHaveLength(1);
    t.clock.advance(1);
    await t.drain();
    expect(t.sender.requests).toHaveLength(2);
    t.clock.advance(30_000);
    await t.drain();
    history = await t.history(endpoint.id);
    expect(history.map((d) => [d.attempt, d.status])).toEqual([
      [1, "failed"],
      [2, "failed"],
      [3, "failed"],
    ]);
    expect(history[2]!.nextAttemptAt).toBeNull();
    t.clock.advance(86_400_000);
    await t.drain();
    expect(t.sender.requests).toHaveLength(3);
  });

  it("waits at least as long as a Retry-After on 429", async () => {
    const t = await setup({
      sender: scriptedSender(() => ({ ok: false, responseStatus: 429, retryAfterMs: 120_000 })),
    });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    const [first, second] = await t.history(endpoint.id);
    expect(second!.scheduledAt.getTime() - first!.attemptedAt!.getTime()).toBe(120_000);
  });

  it("disables the endpoint at once on 410 Gone and does not retry", async () => {
    const t = await setup({ sender: scriptedSender(() => ({ ok: false, responseStatus: 410 })) });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    expect(await t.history(endpoint.id)).toHaveLength(1);
    expect(await t.endpoints.get(SCOPE, endpoint.id)).toMatchObject({
      enabled: false,
      disabledReason: "gone",
    });
    expect(t.seen.disabled).toEqual(["gone"]);
    // New events to a disabled endpoint get a skipped record and nothing is sent.
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    expect(t.sender.requests).toHaveLength(1);
    expect((await t.history(endpoint.id)).map((d) => d.status).sort()).toEqual(["failed", "skipped"]);
  });

  it("skips due deliveries of an endpoint disabled after they were queued", async () => {
    const t = await engineHarness({ sender: scriptedSender(() => ({ ok: false, responseStatus: 500 })) });
    h = t;
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.endpoints.update(SCOPE, endpoint.id, { enabled: false });
    t.dispatcher.start();
    await t.drain();
    expect(t.sender.requests).toHaveLength(0);
    expect((await t.history(endpoint.id)).map((d) => d.status)).toEqual(["skipped"]);
  });

  it("sends a manual retry at once and does not retry it automatically", async () => {
    // A long schedule, so a wrongly scheduled follow-up of the manual attempt could not hide behind its end.
    const t = await setup({
      sender: scriptedSender(() => ({ ok: false, responseStatus: 503 })),
      options: { retryScheduleMs: [5_000, 5_000, 5_000, 5_000, 5_000, 5_000] },
    });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    const [first] = await t.history(endpoint.id);
    const manual = await t.deliveries.retry(SCOPE, first!.id);
    expect(manual).toMatchObject({ trigger: "manual", status: "pending", attempt: 3 });
    await t.drain();
    expect(t.sender.requests).toHaveLength(2);
    const after = await t.deliveries.get(SCOPE, manual.id);
    expect(after).toMatchObject({ status: "failed", nextAttemptAt: null });
    const all = await t.history(endpoint.id);
    expect(all.filter((d) => d.trigger === "manual")).toHaveLength(1);
    expect(all.filter((d) => d.status === "pending")).toHaveLength(1); // the automatic attempt 2, not a manual follow-up
  });

  describe("an acknowledged pair (ADR 19)", () => {
    async function failedOnce(t: Harness) {
      const { endpoint } = await t.endpoints.create(SCOPE, {
        url: "https://x.example.com/",
        events: ["message.sent"],
      });
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      await t.drain();
      const history = await t.history(endpoint.id);
      expect(history.map((d) => [d.attempt, d.trigger, d.status])).toEqual([
        [1, "automatic", "failed"],
        [2, "automatic", "pending"],
      ]);
      return { endpoint, first: history[0]!, second: history[1]! };
    }

    it("a manual retry that succeeds while automatic attempt 2 is pending cancels attempt 2: nothing is sent twice", async () => {
      const t = await setup({
        sender: scriptedSender((_req, n) =>
          n === 1 ? { ok: false, responseStatus: 500 } : { ok: true, responseStatus: 200 },
        ),
      });
      const { endpoint, first, second } = await failedOnce(t);
      const manual = await t.deliveries.retry(SCOPE, first.id);
      await t.drain();
      expect(await t.deliveries.get(SCOPE, manual.id)).toMatchObject({ status: "succeeded", attempt: 3 });
      expect(await t.deliveries.get(SCOPE, second.id)).toMatchObject({
        status: "cancelled",
        error: "superseded",
        attemptedAt: null,
        nextAttemptAt: null,
      });
      // Long past attempt 2's time: it is not sent, and nothing else is owed.
      t.clock.advance(3_600_000);
      await t.drain();
      expect(t.sender.requests).toHaveLength(2);
      expect((await t.history(endpoint.id)).filter((d) => d.status === "pending")).toHaveLength(0);
    });

    it("a manual retry of a pair that already succeeded is sent: it is an explicit request", async () => {
      const t = await setup();
      const { endpoint } = await t.endpoints.create(SCOPE, {
        url: "https://x.example.com/",
        events: ["message.sent"],
      });
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      await t.drain();
      const [first] = await t.history(endpoint.id);
      expect(first).toMatchObject({ status: "succeeded" });
      const manual = await t.deliveries.retry(SCOPE, first!.id);
      await t.drain();
      expect(t.sender.requests).toHaveLength(2);
      expect(await t.deliveries.get(SCOPE, manual.id)).toMatchObject({ status: "succeeded", attempt: 2 });
    });

    it("an automatic attempt in flight when the manual one succeeds records what it got, and no attempt follows it", async () => {
      let release: (() => void) | null = null;
      const held = new Promise<void>((r) => {
        release = r;
      });
      const t = await setup({
        sender: scriptedSender(async (_req, n) => {
          if (n === 1) return { ok: false, responseStatus: 500 };
          if (n === 2) {
            await held; // automatic attempt 2, answered only after the manual one is recorded
            return { ok: false, responseStatus: 500 };
          }
          return { ok: true, responseStatus: 200 };
        }),
      });
      const { endpoint, first, second } = await failedOnce(t);
      t.clock.advance(5_000);
      t.dispatcher.wake();
      await until(() => t.sender.requests.length === 2);
      const manual = await t.deliveries.retry(SCOPE, first.id);
      await until(async () => (await t.deliveries.get(SCOPE, manual.id))?.status === "succeeded");
      expect(await t.deliveries.get(SCOPE, second.id)).toMatchObject({
        status: "cancelled",
        error: "superseded",
      });
      release!();
      await t.drain();
      expect(await t.deliveries.get(SCOPE, second.id)).toMatchObject({
        status: "failed",
        responseStatus: 500,
        nextAttemptAt: null,
      });
      t.clock.advance(3_600_000);
      await t.drain();
      expect(t.sender.requests).toHaveLength(3);
      const history = await t.history(endpoint.id);
      expect(history.map((d) => d.attempt)).toEqual([1, 2, 3]);
      expect(history.filter((d) => d.status === "pending")).toHaveLength(0);
    });
  });

  it("cancels what is owed to a deleted endpoint and sends nothing more", async () => {
    const t = await engineHarness();
    h = t;
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.endpoints.remove(SCOPE, endpoint.id);
    t.dispatcher.start();
    await t.drain();
    expect(t.sender.requests).toHaveLength(0);
    const left = await t.repos.deliveries.list(SCOPE, endpoint.id, {}, { limit: 10, cursor: null });
    expect(left.data.map((d) => d.status)).toEqual(["cancelled"]);
  });

  it("signs with both secrets during a rotation grace period, and only the new one after", async () => {
    const t = await setup();
    const { endpoint, secret: oldSecret } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    const { secret: newSecret } = await t.endpoints.rotate(SCOPE, endpoint.id, 60);
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    expect(t.sender.requests[0]!.secrets).toEqual([newSecret, oldSecret]);
    t.clock.advance(60_000);
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    expect(t.sender.requests[1]!.secrets).toEqual([newSecret]);
  });

  it("keeps at most endpointConcurrency in flight per endpoint, so a slow endpoint does not hold up others", async () => {
    const release: (() => void)[] = [];
    const sender = scriptedSender((req) =>
      req.url.includes("slow")
        ? new Promise((r) => release.push(() => r({ ok: true, responseStatus: 200 })))
        : { ok: true, responseStatus: 200 },
    );
    const t = await setup({ sender, options: { endpointConcurrency: 3, concurrency: 20 } });
    await t.endpoints.create(SCOPE, { url: "https://slow.example.com/", events: ["message.sent"] });
    const fast = await t.endpoints.create(SCOPE, {
      url: "https://fast.example.com/",
      events: ["message.opened"],
    });
    for (let i = 0; i < 10; i++)
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    for (let i = 0; i < 50; i++) {
      await t.events.publish(SCOPE, { type: "message.opened", data: sampleMessage("delivered") });
    }
    const succeeded = async () =>
      (await t.history(fast.endpoint.id)).filter((d) => d.status === "succeeded").length;
    await until(
      async () => {
        if ((await succeeded()) >= 50) return true;
        t.dispatcher.wake();
        return false;
      },
      "the fast endpoint's 50 deliveries",
      { everyMs: 10 },
    );
    expect((await t.history(fast.endpoint.id)).filter((d) => d.status === "succeeded")).toHaveLength(50);
    expect(release.length).toBe(3);
    while (release.length) {
      release.shift()!();
      await new Promise((r) => setTimeout(r, 5));
      t.dispatcher.wake();
    }
    await t.drain();
    while (release.length) {
      release.shift()!();
      await new Promise((r) => setTimeout(r, 5));
      await t.drain();
    }
    expect(t.sender.requests.filter((r) => r.url.includes("slow"))).toHaveLength(10);
  });
});

describe("maintenance", () => {
  it("finishes a fan-out an earlier version left pending: its event stored with the flag, no deliveries", async () => {
    const t = await engineHarness();
    h = t;
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    // Versions before ADR 2's change stored the event first, flagged, then its deliveries; a crash in
    // between left what this makes.
    await t.publishDyingAsEarlierVersion({ type: "message.sent", data: sampleMessage("sent") });
    expect(await t.history(endpoint.id)).toHaveLength(0);
    expect(await t.jobs.finishFanouts()).toBe(0); // too recent: the publish may still be running
    t.clock.advance(31_000);
    expect(await t.jobs.finishFanouts()).toBe(1);
    expect(await t.jobs.finishFanouts()).toBe(0); // and cleared its flag
    t.dispatcher.start();
    await t.drain();
    expect((await t.history(endpoint.id)).map((d) => d.status)).toEqual(["succeeded"]);
    expect(t.sender.requests).toHaveLength(1);
  });

  it("a publish writes its deliveries, then its event, and no flag to clear afterwards", async () => {
    const t = await setup();
    await t.endpoints.create(SCOPE, { url: "https://a.example.com/", events: ["message.sent"] });
    await t.endpoints.create(SCOPE, { url: "https://b.example.com/", events: ["message.sent"] });
    const writes: string[] = [];
    const insertMany = t.repos.deliveries.insertMany.bind(t.repos.deliveries);
    const insert = t.repos.events.insert.bind(t.repos.events);
    const mark = t.repos.events.markFannedOut.bind(t.repos.events);
    t.repos.deliveries.insertMany = async (ds) => {
      // The results' write asks for the follow-up attempts too, none here.
      if (ds.length > 0) writes.push(`deliveries ${ds.length}`);
      await insertMany(ds);
    };
    t.repos.events.insert = async (e) => {
      writes.push(`event fanoutPending=${e.fanoutPending}`);
      return insert(e);
    };
    t.repos.events.markFannedOut = async (ids) => {
      writes.push(`flags ${ids.length}`);
      await mark(ids);
    };
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    expect(writes).toEqual(["deliveries 2", "event fanoutPending=false"]);
    expect(t.sender.requests).toHaveLength(2);
    t.clock.advance(31_000);
    expect(await t.jobs.finishFanouts()).toBe(0);
  });

  it("a publish that dies between its deliveries and its event sends nothing, then cancels them once the event cannot come", async () => {
    const t = await setup();
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    await t.publishDyingBeforeEvent({ type: "message.sent", data: sampleMessage("sent") });
    const [stored] = await t.history(endpoint.id);
    expect(stored?.status).toBe("pending");
    // Claimed while its event may still come: held back a few seconds, not sent, not cancelled.
    t.dispatcher.wake();
    await t.drain();
    const [waiting] = await t.history(endpoint.id);
    expect(waiting?.status).toBe("pending");
    expect(waiting!.scheduledAt.getTime()).toBeGreaterThan(stored!.scheduledAt.getTime());
    expect(t.sender.requests).toHaveLength(0);
    // Past the wait, no repeat stored the event: the publish never happened; nothing is owed.
    t.clock.advance(61_000);
    t.dispatcher.wake();
    await t.drain();
    expect((await t.history(endpoint.id)).map((d) => d.status)).toEqual(["cancelled"]);
    expect(t.sender.requests).toHaveLength(0);
  });

  it("a repeat with the same Idempotency-Key stores the event its first request did not, and it is sent once", async () => {
    const t = await setup();
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    const input = { type: "message.sent", data: sampleMessage("sent"), idempotencyKey: "k-1" };
    await t.publishDyingBeforeEvent(input);
    // The engine finds the delivery first and holds it back; the client retries seconds later.
    t.dispatcher.wake();
    await t.drain();
    expect(t.sender.requests).toHaveLength(0);
    t.clock.advance(3_000);
    const again = await t.events.publish(SCOPE, input);
    // The first request was never answered: this is its first answer, under the id it reserved.
    expect(again.replayed).toBe(false);
    t.clock.advance(5_000);
    t.dispatcher.wake();
    await t.drain();
    expect(t.sender.requests.map((r) => r.eventId)).toEqual([again.envelope.id]);
    expect((await t.history(endpoint.id)).map((d) => d.status)).toEqual(["succeeded"]);
    // A third request is a replay of the stored event, and sends nothing more.
    const third = await t.events.publish(SCOPE, input);
    expect(third).toMatchObject({ replayed: true, envelope: { id: again.envelope.id } });
    await t.drain();
    expect(t.sender.requests).toHaveLength(1);
  });

  it("disables an endpoint that failed without success for HERALD_DISABLE_AFTER", async () => {
    const t = await setup({ sender: scriptedSender(() => ({ ok: false, responseStatus: 500 })) });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    t.clock.advance(86_400_000 - 1);
    expect(await t.jobs.disableFailing()).toBe(0);
    t.clock.advance(1);
    expect(await t.jobs.disableFailing()).toBe(1);
    expect(await t.endpoints.get(SCOPE, endpoint.id)).toMatchObject({
      enabled: false,
      disabledReason: "failing",
    });
    const on = await t.endpoints.enable(SCOPE, endpoint.id);
    expect(on).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
  });

  it("a success clears the failure streak", async () => {
    let fail = true;
    const t = await setup({
      sender: scriptedSender(() => (fail ? { ok: false, responseStatus: 500 } : { ok: true })),
    });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    expect((await t.endpoints.get(SCOPE, endpoint.id)).failingSince).not.toBeNull();
    fail = false;
    t.clock.advance(5_000);
    await t.drain();
    expect((await t.endpoints.get(SCOPE, endpoint.id)).failingSince).toBeNull();
  });

  it("deletes events and finished deliveries past retention", async () => {
    const t = await setup();
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await t.drain();
    t.clock.advance(30 * 86_400_000 + 1);
    expect(await t.jobs.applyRetention()).toEqual({ events: 1, deliveries: 1 });
    expect(await t.history(endpoint.id)).toHaveLength(0);
  });
});

describe("claiming", () => {
  it("a claim of 10 due deliveries for one idle endpoint with a cap of 10 sends all 10 and gives none back", async () => {
    const held: (() => void)[] = [];
    const sender = scriptedSender(
      () => new Promise((r) => held.push(() => r({ ok: true, responseStatus: 200 }))),
    );
    const t = await engineHarness({ sender, options: { endpointConcurrency: 10, concurrency: 50 } });
    h = t;
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

  describe("the publish hand-over (ADR 9)", () => {
    /** Counts the engine's reads of the store: due work, endpoints by id, events by id. */
    function countReads(t: Harness) {
      const n = { due: 0, endpoints: 0, events: 0 };
      const due = t.repos.deliveries.due.bind(t.repos.deliveries);
      t.repos.deliveries.due = (r) => {
        n.due++;
        return due(r);
      };
      const endpoints = t.repos.endpoints.getMany.bind(t.repos.endpoints);
      t.repos.endpoints.getMany = (ids) => {
        n.endpoints++;
        return endpoints(ids);
      };
      const events = t.repos.events.getMany.bind(t.repos.events);
      t.repos.events.getMany = (ids) => {
        n.events++;
        return events(ids);
      };
      return n;
    }

    it("a publish to an idle engine is sent to its 8 endpoints with no due read, no endpoints read and no event read", async () => {
      const atSend: { due: number; endpoints: number; events: number }[] = [];
      let n = { due: 0, endpoints: 0, events: 0 };
      const t = await setup({
        sender: scriptedSender(() => {
          atSend.push({ ...n });
          return { ok: true, responseStatus: 200 };
        }),
      });
      const created = [];
      for (let i = 0; i < 8; i++)
        created.push(
          (await t.endpoints.create(SCOPE, { url: `https://x${i}.example.com/`, events: ["message.sent"] }))
            .endpoint,
        );
      await t.dispatcher.idle();
      n = countReads(t);
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      await until(() => atSend.length === 8);
      expect(atSend).toEqual(Array(8).fill({ due: 0, endpoints: 0, events: 0 }));
      await t.dispatcher.idle();
      for (const e of created) expect((await t.history(e.id)).map((d) => d.status)).toEqual(["succeeded"]);
      expect(t.sender.requests.map((r) => r.url).sort()).toEqual(created.map((e) => e.url).sort());
      // Nothing more was read to send them, only their results written.
      expect(n).toEqual({ due: 0, endpoints: 0, events: 0 });
    });

    it("leaves deliveries of a shard another process owns to it: this one neither sends nor holds them", async () => {
      const t = await engineHarness();
      h = t;
      // An endpoint whose shard this process takes while "elsewhere" runs, and one whose shard "elsewhere" holds.
      let mine = await t.endpoints.create(SCOPE, {
        url: "https://mine.example.com/",
        events: ["message.sent"],
      });
      while (assignShards(["elsewhere", "test"]).get(shardOf(mine.endpoint.id)) !== "test") {
        await t.endpoints.remove(SCOPE, mine.endpoint.id);
        mine = await t.endpoints.create(SCOPE, {
          url: "https://mine.example.com/",
          events: ["message.sent"],
        });
      }
      let theirs = await t.endpoints.create(SCOPE, {
        url: "https://theirs.example.com/",
        events: ["message.sent"],
      });
      while (shardOf(theirs.endpoint.id) === shardOf(mine.endpoint.id)) {
        await t.endpoints.remove(SCOPE, theirs.endpoint.id);
        theirs = await t.endpoints.create(SCOPE, {
          url: "https://theirs.example.com/",
          events: ["message.sent"],
        });
      }
      // Another live process holds the second endpoint's shard, for longer than the test runs.
      const far = new Date(t.clock.now().getTime() + 86_400_000);
      await t.repos.shards.beat("elsewhere", far);
      expect(
        await t.repos.shards.acquire([
          { shard: shardOf(theirs.endpoint.id), generation: 1, owner: "elsewhere", expiresAt: far },
        ]),
      ).toEqual([shardOf(theirs.endpoint.id)]);
      t.dispatcher.start();
      await t.dispatcher.idle();
      const n = countReads(t);
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      await until(() => t.sender.requests.length === 1);
      await t.dispatcher.idle();
      expect(t.sender.requests.map((r) => r.url)).toEqual(["https://mine.example.com/"]);
      expect((await t.history(mine.endpoint.id)).map((d) => d.status)).toEqual(["succeeded"]);
      expect((await t.history(theirs.endpoint.id)).map((d) => d.status)).toEqual(["pending"]);
      // The other shard's delivery went the existing way: a due read, of this process's shards only.
      expect(n.due).toBeGreaterThan(0);
    });

    it.each([
      ["tells the owner and reads nothing for it", true],
      [
        "reads for it itself and announces nothing, as without signals, while the channel is not known to work",
        false,
      ],
    ])("a publish storing work in a shard another process holds %s", async (_, live) => {
      const bus = Object.assign(dueBus(), { live });
      const t = await engineHarness({ repos: Object.assign(createMemoryRepositories(), { due: bus }) });
      h = t;
      let theirs = await t.endpoints.create(SCOPE, {
        url: "https://theirs.example.com/",
        events: ["message.sent"],
      });
      // Another live process holds its shard, for longer than the test runs.
      const far = new Date(t.clock.now().getTime() + 86_400_000);
      await t.repos.shards.beat("elsewhere", far);
      while (assignShards(["elsewhere", "test"]).get(shardOf(theirs.endpoint.id)) !== "elsewhere") {
        await t.endpoints.remove(SCOPE, theirs.endpoint.id);
        theirs = await t.endpoints.create(SCOPE, {
          url: "https://theirs.example.com/",
          events: ["message.sent"],
        });
      }
      const shard = shardOf(theirs.endpoint.id);
      expect(
        await t.repos.shards.acquire([{ shard, generation: 1, owner: "elsewhere", expiresAt: far }]),
      ).toEqual([shard]);
      t.dispatcher.start();
      await t.dispatcher.idle();
      const n = countReads(t);
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      await t.dispatcher.idle();
      if (live) {
        expect(bus.announced).toEqual([[theirs.endpoint.id]]);
        // A read here would find nothing: it reads this process's shards only.
        expect(n.due).toBe(0);
      } else {
        expect(bus.announced).toEqual([]);
        expect(n.due).toBeGreaterThan(0);
      }
      expect(t.sender.requests).toEqual([]);
      expect((await t.history(theirs.endpoint.id)).map((d) => d.status)).toEqual(["pending"]);
    });

    it("reads and sends at once what another process announces in a shard it holds, and nothing else wakes it", async () => {
      const bus = dueBus();
      const repos = Object.assign(createMemoryRepositories(), { due: bus });
      const t = await setup({ repos });
      const { endpoint } = await t.endpoints.create(SCOPE, {
        url: "https://x.example.com/",
        events: ["message.sent"],
      });
      await t.dispatcher.idle();
      // Another process on the same store, which holds no shard (its engine never started): its publish
      // is stored and announced, and reaches this engine only through the announcement.
      const other = await engineHarness({ repos, cipher: t.cipher, owner: "elsewhere" });
      const n = countReads(t);
      await other.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      expect(bus.announced).toEqual([[endpoint.id]]);
      await until(() => t.sender.requests.length === 1);
      await t.dispatcher.idle();
      expect(n.due).toBeGreaterThan(0);
      expect((await t.history(endpoint.id)).map((d) => d.status)).toEqual(["succeeded"]);
      // Stopped, it no longer listens.
      await t.dispatcher.stop(1_000);
      expect(bus.listeners).toBe(0);
    });

    it("a due read on its way when a publish hands over the same delivery: it is sent once", async () => {
      const t = await setup();
      const { endpoint } = await t.endpoints.create(SCOPE, {
        url: "https://x.example.com/",
        events: ["message.sent"],
      });
      await t.dispatcher.idle();
      // The next due read is asked before the publish and answered after its write: it finds the delivery.
      let go!: () => void;
      const gate = new Promise<void>((r) => {
        go = r;
      });
      let asked = false;
      const due = t.repos.deliveries.due.bind(t.repos.deliveries);
      t.repos.deliveries.due = async (r) => {
        asked = true;
        await gate;
        return due(r);
      };
      t.dispatcher.wake();
      await until(() => asked);
      await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      expect((await t.history(endpoint.id)).map((d) => d.status)).toEqual(["pending"]);
      go();
      await t.dispatcher.idle();
      await t.drain();
      expect(t.sender.requests).toHaveLength(1);
      expect((await t.history(endpoint.id)).map((d) => d.status)).toEqual(["succeeded"]);
    });

    it("a graceful stop sends nothing of what was handed over and queued: it stays pending, and the next owner sends it once", async () => {
      const held: (() => void)[] = [];
      const sender = scriptedSender(
        () => new Promise((r) => held.push(() => r({ ok: true, responseStatus: 200 }))),
      );
      const t = await setup({ sender, options: { endpointConcurrency: 1 } });
      const { endpoint } = await t.endpoints.create(SCOPE, {
        url: "https://x.example.com/",
        events: ["message.sent"],
      });
      await t.dispatcher.idle();
      for (let i = 0; i < 3; i++)
        await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      await until(() => held.length === 1);
      const stopping = t.dispatcher.stop(5_000);
      for (const go of held.splice(0)) go();
      await stopping;
      expect(t.sender.requests).toHaveLength(1);
      expect((await t.history(endpoint.id)).map((d) => d.status).sort()).toEqual([
        "pending",
        "pending",
        "succeeded",
      ]);
      const next = await setup({ repos: t.repos, cipher: t.cipher, owner: "next" });
      await next.drain();
      expect(next.sender.requests).toHaveLength(2);
      const sent = [...t.sender.requests, ...next.sender.requests].map((r) => r.eventId);
      expect(new Set(sent).size).toBe(3);
      expect((await t.history(endpoint.id)).every((d) => d.status === "succeeded")).toBe(true);
    });

    it("an endpoint this engine disables (410 Gone) is read again for the first attempts handed over before: they are skipped, not sent", async () => {
      const held: (() => void)[] = [];
      // The first answer waits for the test; any later one (there should be none) comes at once.
      const sender = scriptedSender((_req, n) =>
        n === 1
          ? new Promise((r) => held.push(() => r({ ok: false, responseStatus: 410 })))
          : { ok: false, responseStatus: 410 },
      );
      const t = await setup({ sender, options: { endpointConcurrency: 1 } });
      const { endpoint } = await t.endpoints.create(SCOPE, {
        url: "https://x.example.com/",
        events: ["message.sent"],
      });
      await t.dispatcher.idle();
      for (let i = 0; i < 3; i++)
        await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
      await until(() => held.length === 1);
      for (const go of held.splice(0)) go();
      await t.dispatcher.idle();
      expect(t.sender.requests).toHaveLength(1);
      expect((await t.history(endpoint.id)).map((d) => d.status).sort()).toEqual([
        "failed",
        "skipped",
        "skipped",
      ]);
    });
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
    const t = await engineHarness({
      sender,
      options: { endpointConcurrency: 10, concurrency: 50, queueDepth: 100 },
    });
    h = t;
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

/** Due signals within one process, for engines sharing one memory store. */
function dueBus() {
  const listeners = new Set<(endpointIds: readonly string[]) => void>();
  const announced: string[][] = [];
  return {
    announced,
    live: true,
    get listeners() {
      return listeners.size;
    },
    announce(endpointIds: readonly string[]) {
      announced.push([...endpointIds]);
      for (const heard of listeners) queueMicrotask(() => heard(endpointIds));
    },
    listen(heard: (endpointIds: readonly string[]) => void) {
      listeners.add(heard);
      return () => listeners.delete(heard);
    },
  };
}
