import { describe, expect, it } from "vitest";
import { SCOPE, sampleMessage, scriptedSender } from "../../support/engine-harness.ts";
import { until } from "../../support/until.ts";
import { type Harness, setup } from "./engine-suite.ts";

// The dispatcher's retries: the schedule, Retry-After, manual retries and the pairs they acknowledge (ADR 19).

describe("dispatcher", () => {
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
});
