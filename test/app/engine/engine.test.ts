import { describe, expect, it } from "vitest";
import { SCOPE, sampleMessage, scriptedSender } from "../../support/engine-harness.ts";
import { until } from "../../support/until.ts";
import { harness, setup } from "./engine-suite.ts";

// The dispatcher sends a published event, signed; stops for an endpoint disabled or deleted; rotates secrets; caps per endpoint.

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
    const t = await harness({ sender: scriptedSender(() => ({ ok: false, responseStatus: 500 })) });
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

  it("cancels what is owed to a deleted endpoint and sends nothing more", async () => {
    const t = await harness();
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
