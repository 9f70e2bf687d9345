import { describe, expect, it } from "vitest";
import { SCOPE, sampleMessage } from "../support/engine-harness.ts";
import { harness } from "./engine/engine-suite.ts";

const bounced = (over: Record<string, unknown> = {}) => ({ ...sampleMessage("bounced"), ...over });

describe("fan-out with payload filters", () => {
  it("gives an event no delivery where the filter does not match (not even a skipped one), and counts it", async () => {
    const t = await harness();
    const open = await t.endpoints.create(SCOPE, {
      url: "https://open.example.com/",
      events: ["message.bounced"],
    });
    const transactional = await t.endpoints.create(SCOPE, {
      url: "https://tx.example.com/",
      events: ["message.bounced"],
      filter: { "data.message_type": "transactional" },
    });
    const email = await t.endpoints.create(SCOPE, {
      url: "https://email.example.com/",
      events: ["message.bounced"],
      filter: { "data.channel": { $in: ["email"] }, "data.recipient": { $regex: "@example\\.com$" } },
    });
    const smsOff = await t.endpoints.create(SCOPE, {
      url: "https://sms.example.com/",
      events: ["message.bounced"],
      filter: { "data.channel": "sms" },
    });
    await t.endpoints.update(SCOPE, smsOff.endpoint.id, { enabled: false });

    const marketing = await t.events.publish(SCOPE, {
      type: "message.bounced",
      data: bounced({ message_type: "marketing" }),
    });
    expect(marketing.endpoints).toBe(2);
    const stored = await t.repos.events.get(SCOPE, marketing.envelope.id);
    expect(stored?.targets.sort()).toEqual([open.endpoint.id, email.endpoint.id].sort());
    expect(t.seen.filtered).toEqual({ "message.bounced": 2 });

    const tx = await t.events.publish(SCOPE, {
      type: "message.bounced",
      data: bounced({ message_type: "transactional" }),
    });
    expect(tx.endpoints).toBe(3);
    expect(t.seen.filtered).toEqual({ "message.bounced": 3 });

    t.dispatcher.start();
    await t.drain();
    const eventsAt = async (id: string) => (await t.history(id)).map((d) => d.eventId).sort();
    expect(await eventsAt(open.endpoint.id)).toEqual([marketing.envelope.id, tx.envelope.id].sort());
    expect(await eventsAt(email.endpoint.id)).toEqual([marketing.envelope.id, tx.envelope.id].sort());
    expect(await eventsAt(transactional.endpoint.id)).toEqual([tx.envelope.id]);
    // A disabled endpoint records a skipped delivery for what it would have received; not for this.
    expect(await t.history(smsOff.endpoint.id)).toEqual([]);
    expect(t.sender.requests).toHaveLength(5);
  });

  it("counts nothing when every filter matches, or an event has no subscriber", async () => {
    const t = await harness();
    await t.endpoints.create(SCOPE, {
      url: "https://a.example.com/",
      events: ["message.bounced"],
      filter: { type: "message.bounced", occurred_at: { $gte: "2026-01-01T00:00:00Z" } },
    });
    expect((await t.events.publish(SCOPE, { type: "message.bounced", data: bounced() })).endpoints).toBe(1);
    expect(
      (await t.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") })).endpoints,
    ).toBe(0);
    expect(t.seen.filtered).toEqual({});
  });

  it("decides the targets once, at acceptance: an interrupted fan-out is finished with exactly those", async () => {
    const t = await harness();
    const wanted = await t.endpoints.create(SCOPE, {
      url: "https://wanted.example.com/",
      events: ["message.bounced"],
      filter: { "data.channel": "email" },
    });
    const unwanted = await t.endpoints.create(SCOPE, {
      url: "https://unwanted.example.com/",
      events: ["message.bounced"],
      filter: { "data.channel": "sms" },
    });
    // An earlier version's publish (event first, flagged) dies before creating its deliveries.
    await t.publishDyingAsEarlierVersion({ type: "message.bounced", data: bounced() });
    // Before the maintenance job runs, both filters change: the event's targets do not.
    await t.endpoints.update(SCOPE, wanted.endpoint.id, { filter: { "data.channel": "sms" } });
    await t.endpoints.update(SCOPE, unwanted.endpoint.id, { filter: null });
    t.clock.advance(31_000);
    expect(await t.jobs.finishFanouts()).toBe(1);
    t.dispatcher.start();
    await t.drain();
    expect((await t.history(wanted.endpoint.id)).map((d) => d.status)).toEqual(["succeeded"]);
    expect(await t.history(unwanted.endpoint.id)).toEqual([]);
    expect(t.sender.requests.map((r) => r.url)).toEqual(["https://wanted.example.com/"]);
  });

  it("a repeat of a publish that died before storing its event sends only to the repeat's targets", async () => {
    const t = await harness();
    const first = await t.endpoints.create(SCOPE, {
      url: "https://first.example.com/",
      events: ["message.bounced"],
      filter: { "data.channel": "email" },
    });
    // Deliveries stored, then the process dies before the event.
    const input = { type: "message.bounced", data: bounced(), idempotencyKey: "k-2" };
    await t.publishDyingBeforeEvent(input);
    expect(await t.history(first.endpoint.id)).toHaveLength(1);
    // Before the client repeats it, the filters change: the repeat decides the targets anew.
    await t.endpoints.update(SCOPE, first.endpoint.id, { filter: { "data.channel": "sms" } });
    const second = await t.endpoints.create(SCOPE, {
      url: "https://second.example.com/",
      events: ["message.bounced"],
    });
    const again = await t.events.publish(SCOPE, input);
    expect(again.endpoints).toBe(1);
    t.dispatcher.start();
    await t.drain();
    // The first request's leftover is not owed: its endpoint is not among the stored event's targets.
    expect((await t.history(first.endpoint.id)).map((d) => d.status)).toEqual(["cancelled"]);
    expect((await t.history(second.endpoint.id)).map((d) => d.status)).toEqual(["succeeded"]);
    expect(t.sender.requests.map((r) => r.url)).toEqual(["https://second.example.com/"]);
  });

  it("an idempotent repeat answers the first decision and fans out to nobody new", async () => {
    const t = await harness();
    const a = await t.endpoints.create(SCOPE, {
      url: "https://a.example.com/",
      events: ["message.bounced"],
      filter: { "data.message_type": "marketing" },
    });
    const input = { type: "message.bounced", data: bounced(), idempotencyKey: "once" };
    const first = await t.events.publish(SCOPE, input);
    expect(first.endpoints).toBe(0);
    await t.endpoints.update(SCOPE, a.endpoint.id, { filter: null });
    const again = await t.events.publish(SCOPE, input);
    expect(again).toMatchObject({ replayed: true, endpoints: 0 });
    expect(again.envelope.id).toBe(first.envelope.id);
    await t.drain();
    expect(await t.history(a.endpoint.id)).toEqual([]);
    expect(t.seen.filtered).toEqual({ "message.bounced": 1 });
  });

  it("sends a test event whatever the filter: it tests delivery, filter-test tests the filter", async () => {
    const t = await harness();
    t.dispatcher.start();
    const a = await t.endpoints.create(SCOPE, {
      url: "https://a.example.com/",
      events: ["message.bounced"],
      filter: { "data.channel": "carrier-pigeon" },
    });
    const { delivery } = await t.tools.sendTest(SCOPE, a.endpoint.id);
    expect(delivery.status).toBe("pending");
    await t.drain();
    expect(t.sender.requests).toHaveLength(1);
    expect(t.seen.filtered).toEqual({});
  });
});
