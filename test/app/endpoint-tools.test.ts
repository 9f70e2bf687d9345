import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.ts";
import { SCOPE, sampleMessage, scriptedSender } from "../support/engine-harness.ts";
import { harness, setup } from "./engine/engine-suite.ts";

const kindOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return "ok";
  } catch (e) {
    return e instanceof DomainError ? e.kind : String(e);
  }
};

describe("test event", () => {
  it("sends a sample of a subscribed type to that endpoint only, recorded like any delivery", async () => {
    const h = await setup();
    const a = await h.endpoints.create(SCOPE, {
      url: "https://a.example.com/",
      events: ["domain.verified", "message.bounced"],
    });
    const b = await h.endpoints.create(SCOPE, { url: "https://b.example.com/", events: ["message.bounced"] });
    const { event, delivery } = await h.tools.sendTest(SCOPE, a.endpoint.id, "message.bounced");
    expect(event.type).toBe("message.bounced");
    expect(event.data).toMatchObject({ status: "bounced", channel: "email" });
    expect(delivery).toMatchObject({
      webhookId: a.endpoint.id,
      eventId: event.id,
      status: "pending",
      attempt: 1,
    });
    await h.drain();
    expect(h.sender.requests.map((r) => r.url)).toEqual(["https://a.example.com/"]);
    expect(await h.history(b.endpoint.id)).toHaveLength(0);
    expect((await h.history(a.endpoint.id)).map((d) => d.status)).toEqual(["succeeded"]);
    expect(await h.events.get(SCOPE, event.id)).toEqual(event);
    // Default type: the endpoint's first.
    expect((await h.tools.sendTest(SCOPE, a.endpoint.id)).event.type).toBe("domain.verified");
  });

  it("refuses a type the endpoint does not receive, a disabled endpoint, and a foreign one", async () => {
    const h = await harness();
    const a = await h.endpoints.create(SCOPE, { url: "https://a.example.com/", events: ["message.sent"] });
    expect(await kindOf(h.tools.sendTest(SCOPE, a.endpoint.id, "message.opened"))).toBe("validation_failed");
    const other = { ...SCOPE, projectId: "33333333-3333-4333-8333-333333333333" };
    expect(await kindOf(h.tools.sendTest(other, a.endpoint.id))).toBe("not_found");
    await h.endpoints.update(SCOPE, a.endpoint.id, { enabled: false });
    expect(await kindOf(h.tools.sendTest(SCOPE, a.endpoint.id))).toBe("endpoint_disabled");
  });
});

describe("recover", () => {
  it("queues one manual delivery per event in the window whose latest delivery failed or was skipped", async () => {
    let down = true;
    const h = await setup({
      sender: scriptedSender(() =>
        down ? { ok: false, responseStatus: 503 } : { ok: true, responseStatus: 200 },
      ),
      options: { retryScheduleMs: [] },
    });
    const { endpoint } = await h.endpoints.create(SCOPE, {
      url: "https://a.example.com/",
      events: ["message.sent"],
    });
    const since = h.clock.now();
    const failed: string[] = [];
    for (let i = 0; i < 3; i++) {
      failed.push(
        (await h.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") })).envelope.id,
      );
      h.clock.advance(1_000);
    }
    await h.drain();
    // One event delivered fine once the receiver is back; it must not be sent again.
    down = false;
    const fine = (await h.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") }))
      .envelope.id;
    await h.drain();
    // Skipped while disabled.
    await h.endpoints.update(SCOPE, endpoint.id, { enabled: false });
    const skipped = (await h.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") }))
      .envelope.id;
    await h.endpoints.enable(SCOPE, endpoint.id);
    h.clock.advance(1_000);

    const before = h.sender.requests.length;
    const r = await h.tools.recover(SCOPE, endpoint.id, since);
    expect(r.queued).toBe(4);
    await h.drain();
    const resent = h.sender.requests
      .slice(before)
      .map((q) => q.eventId)
      .sort();
    expect(resent).toEqual([...failed, skipped].sort());
    expect(resent).not.toContain(fine);
    const history = await h.history(endpoint.id);
    expect(history.filter((d) => d.trigger === "manual" && d.status === "succeeded")).toHaveLength(4);
    // Everything is delivered now: a second recovery queues nothing.
    expect((await h.tools.recover(SCOPE, endpoint.id, since)).queued).toBe(0);
  });

  it("leaves events outside the window alone and refuses windows over 14 days or reversed", async () => {
    const h = await setup({
      sender: scriptedSender(() => ({ ok: false, responseStatus: 500 })),
      options: { retryScheduleMs: [] },
    });
    const { endpoint } = await h.endpoints.create(SCOPE, {
      url: "https://a.example.com/",
      events: ["message.sent"],
    });
    await h.events.publish(SCOPE, { type: "message.sent", data: sampleMessage("sent") });
    await h.drain();
    h.clock.advance(60_000);
    // A window that starts 30 s after the event was created.
    expect(
      (await h.tools.recover(SCOPE, endpoint.id, new Date(h.clock.now().getTime() - 30_000))).queued,
    ).toBe(0);
    const now = h.clock.now().getTime();
    expect(await kindOf(h.tools.recover(SCOPE, endpoint.id, new Date(now - 15 * 86_400_000)))).toBe(
      "validation_failed",
    );
    expect(await kindOf(h.tools.recover(SCOPE, endpoint.id, new Date(now), new Date(now - 1)))).toBe(
      "validation_failed",
    );
    expect((await h.tools.recover(SCOPE, endpoint.id, new Date(now - 14 * 86_400_000))).queued).toBe(1);
  });
});
