import { describe, expect, it } from "vitest";
import { buildEnvelope, serializeEnvelope } from "../../src/domain/envelope.ts";
import { SCOPE, sampleMessage, scriptedSender } from "../support/engine-harness.ts";
import { harness, setup } from "./engine/engine-suite.ts";

const message = (recipient = "ada@example.com", messageId = crypto.randomUUID()) => ({
  ...sampleMessage("sent"),
  message_id: messageId,
  recipient,
});

/** A sender whose first request stays in flight until `release` is called; later ones fail at once. */
function heldFirstSend() {
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let arrived!: () => void;
  const inFlight = new Promise<void>((r) => {
    arrived = r;
  });
  const sender = scriptedSender(async (_req, n) => {
    if (n === 1) {
      arrived();
      await released;
    }
    return { ok: false, responseStatus: 500, responseBody: "no mailbox for ada@example.com" };
  });
  return { sender, inFlight, release };
}

describe("erasure and the delivery engine", () => {
  it("an attempt that was in flight during the erasure leaves no follow-up, and nothing more is sent", async () => {
    const held = heldFirstSend();
    const t = await setup({ sender: held.sender });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    const messageId = crypto.randomUUID();
    await t.events.publish(SCOPE, { type: "message.sent", data: message("ada@example.com", messageId) });
    t.dispatcher.wake();
    // Attempt 1 is on the wire: the engine has read the event and holds it in its cache.
    await held.inFlight;
    const erasure = await t.erasures.create(SCOPE, { resourceId: messageId });
    expect(erasure).toMatchObject({ eventsErased: 1, deliveriesErased: 1, deliveriesCancelled: 1 });
    held.release();
    await t.dispatcher.idle();
    // The failure is not written over the erasure's cancel, and neither is its follow-up (before, one was,
    // and the engine had to read the event again to cancel it rather than send it from its cache).
    const history = await t.history(endpoint.id);
    expect(history.map((d) => [d.attempt, d.status, d.responseBody])).toEqual([[1, "cancelled", null]]);
    expect(history[0]!.erasedAt).toEqual(erasure.createdAt);
    t.clock.advance(5_000);
    await t.drain();
    expect(t.sender.requests).toHaveLength(1);
    expect((await t.history(endpoint.id)).map((d) => [d.attempt, d.status])).toEqual([[1, "cancelled"]]);
  });

  it("a pending retry of an erased event is cancelled by the erasure and never sent", async () => {
    const t = await setup({
      sender: scriptedSender(() => ({ ok: false, responseStatus: 503, responseBody: "busy" })),
    });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    const kept = await t.events.publish(SCOPE, { type: "message.sent", data: message("bob@example.com") });
    await t.events.publish(SCOPE, { type: "message.sent", data: message("Ada@Example.com") });
    await t.drain();
    expect(t.sender.requests).toHaveLength(2);
    const erasure = await t.erasures.create(SCOPE, { recipient: "ada@example.com" });
    expect(erasure).toMatchObject({
      subject: "recipient",
      eventsErased: 1,
      deliveriesErased: 2,
      deliveriesCancelled: 1,
    });
    t.clock.advance(5_000);
    await t.drain();
    // Only the kept event's retry went out.
    expect(t.sender.requests.map((r) => r.eventId)).toEqual([
      expect.any(String),
      expect.any(String),
      kept.envelope.id,
    ]);
    const erased = (await t.history(endpoint.id)).filter((d) => d.erasedAt !== null);
    expect(erased.map((d) => [d.attempt, d.status, d.responseStatus, d.responseBody])).toEqual([
      [1, "failed", 503, null],
      [2, "cancelled", null, null],
    ]);
    await expect(t.deliveries.retry(SCOPE, erased[0]!.id)).rejects.toMatchObject({
      kind: "conflict",
      message: expect.stringMatching(/erased/),
    });
  });

  it("fan-out recovery and the recovery tool do not bring an erased event back", async () => {
    const t = await harness({ sender: scriptedSender(() => ({ ok: false, responseStatus: 500 })) });
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://x.example.com/",
      events: ["message.sent"],
    });
    // A publish of an earlier version (event first, flagged) that died before storing its deliveries.
    const messageId = crypto.randomUUID();
    await t.publishDyingAsEarlierVersion({
      type: "message.sent",
      data: message("ada@example.com", messageId),
    });
    expect(await t.erasures.create(SCOPE, { resourceId: messageId })).toMatchObject({
      eventsErased: 1,
      deliveriesErased: 0,
    });
    t.clock.advance(31_000);
    expect(await t.jobs.finishFanouts()).toBe(0);

    // One that failed, then was erased: recovering the window queues nothing for it.
    t.dispatcher.start();
    const other = crypto.randomUUID();
    await t.events.publish(SCOPE, { type: "message.sent", data: message("ada@example.com", other) });
    await t.drain();
    await t.erasures.create(SCOPE, { resourceId: other });
    const recovery = await t.tools.recover(SCOPE, endpoint.id, new Date(t.clock.now().getTime() - 3_600_000));
    expect(recovery.queued).toBe(0);
    await t.drain();
    expect(t.sender.requests).toHaveLength(1);
  });

  it("finds events stored before Herald kept their subject fields, once the backfill has filled them in", async () => {
    const t = await harness();
    const now = t.clock.now();
    const envelope = buildEnvelope({
      id: `evt_${"a".repeat(32)}`,
      type: "message.sent",
      data: message("Grace@Example.com"),
      tenantId: SCOPE.tenantId,
      projectId: SCOPE.projectId,
      occurredAt: now,
    });
    // As an earlier version stored it: no subject fields.
    await t.repos.events.insert({
      id: envelope.id,
      tenantId: SCOPE.tenantId,
      projectId: SCOPE.projectId,
      type: envelope.type,
      body: serializeEnvelope(envelope),
      occurredAt: now,
      createdAt: now,
      targets: [],
      fanoutPending: false,
      resourceId: null,
      recipientKey: null,
      sequence: now.getTime() * 1000,
    });
    expect(await t.erasures.create(SCOPE, { recipient: "grace@example.com" })).toMatchObject({
      eventsErased: 1,
    });
    expect(await t.repos.events.get(SCOPE, envelope.id)).toBeNull();
    expect(await t.erasures.backfill()).toBe(1);
  });
});

describe("per-project retention", () => {
  it("deletes a project's events, finished records and erasures past its own retention, others' past the server's", async () => {
    const t = await setup();
    const other = { tenantId: SCOPE.tenantId, projectId: "33333333-3333-4333-8333-333333333333" };
    for (const scope of [SCOPE, other]) {
      await t.endpoints.create(scope, { url: "https://x.example.com/", events: ["message.sent"] });
      await t.events.publish(scope, { type: "message.sent", data: message() });
      await t.erasures.create(scope, { resourceId: crypto.randomUUID() });
    }
    await t.drain();
    expect(await t.settings.update(SCOPE, { retention: "1d" })).toMatchObject({
      retentionMs: 86_400_000,
      effectiveRetentionMs: 86_400_000,
    });
    t.clock.advance(86_400_000 + 1);
    expect(await t.jobs.applyRetention()).toEqual({ events: 1, deliveries: 1 });
    expect((await t.erasures.list(SCOPE, { limit: 10, cursor: null })).data).toEqual([]);
    expect((await t.erasures.list(other, { limit: 10, cursor: null })).data).toHaveLength(1);
    t.clock.advance(29 * 86_400_000);
    expect(await t.jobs.applyRetention()).toEqual({ events: 1, deliveries: 1 });
    expect((await t.erasures.list(other, { limit: 10, cursor: null })).data).toEqual([]);
  });

  it("a project's retention is never longer than HERALD_RETENTION, and null follows it again", async () => {
    const t = await harness();
    await expect(t.settings.update(SCOPE, { retention: "31d" })).rejects.toMatchObject({
      kind: "validation_failed",
      issues: [{ path: "retention", message: expect.stringContaining("at most 30d") }],
    });
    await expect(t.settings.update(SCOPE, { retention: "59s" })).rejects.toMatchObject({
      kind: "validation_failed",
    });
    expect(await t.settings.update(SCOPE, { retention: "30d" })).toMatchObject({
      retentionMs: 30 * 86_400_000,
    });
    expect(await t.settings.update(SCOPE, {})).toMatchObject({ retentionMs: 30 * 86_400_000 });
    expect(await t.settings.update(SCOPE, { retention: null })).toMatchObject({
      retentionMs: null,
      effectiveRetentionMs: 30 * 86_400_000,
    });
  });
});
