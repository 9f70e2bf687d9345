import { describe, expect, it } from "vitest";
import { SCOPE, sampleMessage, scriptedSender } from "../../support/engine-harness.ts";
import { harness, setup } from "./engine-suite.ts";

// The maintenance jobs: unfinished fan-outs, a publish that died half-way, disabling failing endpoints, retention.

describe("maintenance", () => {
  it("finishes a fan-out an earlier version left pending: its event stored with the flag, no deliveries", async () => {
    const t = await harness();
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
