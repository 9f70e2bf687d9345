import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createHeraldClient,
  type EventType,
  unwrap,
  type WebhookWithSecret,
} from "../../clients/typescript/client.ts";
import type { HeraldEnvelope } from "../../clients/typescript/verify.ts";
import type { HeraldProcess } from "../support/herald-process.ts";
import { behaviours, type ReceivedRequest, type Receiver, startReceiver } from "../support/receiver.ts";
import {
  allDeliveries,
  createEndpoint,
  type DeliveryWorld,
  deliveryWorld,
  eventBody,
  publishRaw,
  waitUntil,
} from "./delivery-support.ts";

// Issue 19 item 1 against three real Herald processes on one PostgreSQL database (each runs the
// reporting job every 30 s, at the same moments) and real HTTPS receivers that verify every signature
// on their own. HERALD_FAILING_AFTER is 1 s, so the first job run after a failure reports the streak;
// HERALD_DISABLE_AFTER is 40 s, so the streak's endpoint is disabled one or two runs later.
const OPERATIONAL: EventType[] = [
  "endpoint.disabled",
  "endpoint.failing",
  "endpoint.recovered",
  "delivery.exhausted",
];

describe("operational events (three real processes, HTTPS receivers)", () => {
  let world: DeliveryWorld;
  const herald: HeraldProcess[] = [];
  const receivers: Receiver[] = [];

  /** A project of its own: its client, and endpoints with receivers that verify their signatures. */
  async function project() {
    const token = await world.newToken();
    const client = createHeraldClient({ baseUrl: herald[0]!.baseUrl, token });
    const endpoint = async (events: EventType[], status: number | "verify") => {
      const secrets: string[] = [];
      const rx = await startReceiver({
        tls: world.tls,
        secrets,
        behaviour: status === "verify" ? behaviours.verify : behaviours.status(status),
      });
      receivers.push(rx);
      const e = await createEndpoint(client, rx.url, events);
      secrets.push(e.secret);
      return { e, rx };
    };
    const publish = async () => {
      const r = await publishRaw(herald[0]!.baseUrl, token, eventBody("message.sent"), randomUUID());
      expect(r.status).toBe(202);
      return r.id!;
    };
    return { token, client, endpoint, publish };
  }

  const envelope = (r: ReceivedRequest) => JSON.parse(r.body.toString("utf8")) as HeraldEnvelope;
  /** The distinct operational events a receiver got (a retried one arrives again under the same id). */
  const operationalAt = (rx: Receiver) => [
    ...new Map(
      rx.requests
        .map(envelope)
        .filter((e) => OPERATIONAL.includes(e.type))
        .map((e) => [e.id, e]),
    ).values(),
  ];
  const about = (events: HeraldEnvelope[], endpoint: WebhookWithSecret) =>
    events.filter((e) => e.resource_id === endpoint.id).map((e) => e.type);

  // Made in beforeAll, so both streaks start before the processes' first job run and share it.
  let streak: Awaited<ReturnType<typeof project>>;
  let streakBroken: { e: WebhookWithSecret; rx: Receiver };
  let streakOps: { e: WebhookWithSecret; rx: Receiver };
  let deadOps: { e: WebhookWithSecret; rx: Receiver };
  let recovery: Awaited<ReturnType<typeof project>>;
  let recoveringBroken: { e: WebhookWithSecret; rx: Receiver };
  let recoveryOps: { e: WebhookWithSecret; rx: Receiver };

  beforeAll(async () => {
    world = await deliveryWorld("e2e_ops", {
      HERALD_RETRY_SCHEDULE: "300ms,300ms",
      HERALD_FAILING_AFTER: "1s",
      HERALD_DISABLE_AFTER: "40s",
    });
    herald.push(...(await Promise.all([world.start(), world.start(), world.start()])));

    streak = await project();
    streakBroken = await streak.endpoint(["message.sent", ...OPERATIONAL], 500);
    streakOps = await streak.endpoint(OPERATIONAL, "verify");
    // An operations endpoint that fails at everything: it must not make a stream about itself.
    deadOps = await streak.endpoint(OPERATIONAL, 503);
    await streak.publish();

    recovery = await project();
    recoveringBroken = await recovery.endpoint(["message.sent"], 500);
    recoveryOps = await recovery.endpoint(OPERATIONAL, "verify");
    await recovery.publish();
  });

  afterAll(async () => {
    await Promise.allSettled(receivers.map((r) => r.close()));
    await world?.close();
  });

  it("a 410 disables the endpoint at once: endpoint.disabled (gone) and delivery.exhausted arrive signed at the operations endpoint, never at the endpoint itself", async () => {
    const p = await project();
    const broken = await p.endpoint(["message.sent", ...OPERATIONAL], 410);
    const ops = await p.endpoint(OPERATIONAL, "verify");
    const eventId = await p.publish();

    await ops.rx.waitFor((rs) => new Set(rs.map((r) => envelope(r).type)).size === 2);
    expect(ops.rx.requests.every((r) => r.verdict.ok)).toBe(true);
    const byType = new Map(operationalAt(ops.rx).map((e) => [e.type, e]));
    expect(byType.get("endpoint.disabled")).toMatchObject({
      resource_id: broken.e.id,
      data: { endpoint_id: broken.e.id, url: broken.rx.url, disabled_reason: "gone", description: "e2e" },
    });
    const [attempt] = await allDeliveries(p.client, broken.e.id, { event_id: eventId });
    expect(byType.get("delivery.exhausted")).toMatchObject({
      resource_id: broken.e.id,
      data: {
        endpoint_id: broken.e.id,
        event_id: eventId,
        event_type: "message.sent",
        delivery_id: attempt!.id,
        attempt: 1,
        response_status: 410,
        error: "http_status",
      },
    });
    // Recorded like any delivery (a result is recorded a moment after the receiver answered), and the
    // endpoint says why it is off.
    let records: Awaited<ReturnType<typeof allDeliveries>> = [];
    await waitUntil(
      async () => {
        records = await allDeliveries(p.client, ops.e.id);
        return records.length >= 2 && records.every((d) => d.status !== "pending");
      },
      () => `records: ${JSON.stringify(records.map((d) => [d.event_type, d.status]))}`,
    );
    expect(records.map((d) => [d.event_type, d.status]).sort()).toEqual([
      ["delivery.exhausted", "succeeded"],
      ["endpoint.disabled", "succeeded"],
    ]);
    const off = await unwrap(
      p.client.GET("/api/v1/webhooks/{id}", { params: { path: { id: broken.e.id } } }),
    );
    expect(off).toMatchObject({ enabled: false, disabled_reason: "gone" });
    // Subscribed to all four, the disabled endpoint got no record of any about itself.
    expect((await allDeliveries(p.client, broken.e.id)).map((d) => d.event_type)).toEqual(["message.sent"]);
    expect(broken.rx.requests.map((r) => envelope(r).type)).toEqual(["message.sent"]);
  });

  // Before the streak's test: the first job run that reports a streak comes at least one run (30 s)
  // before the one that disables its endpoint (HERALD_DISABLE_AFTER 40 s), and the success must come between.
  it("endpoint.recovered follows the first success after a reported streak", async () => {
    const ops = recoveryOps;
    await ops.rx.waitFor((rs) => rs.some((r) => envelope(r).type === "endpoint.failing"));
    recoveringBroken.rx.setBehaviour(behaviours.status(200));
    await recovery.publish();
    await ops.rx.waitFor((rs) => rs.some((r) => envelope(r).type === "endpoint.recovered"));
    expect(ops.rx.requests.every((r) => r.verdict.ok)).toBe(true);
    const events = operationalAt(ops.rx);
    const failing = events.find((e) => e.type === "endpoint.failing")!;
    const recovered = events.find((e) => e.type === "endpoint.recovered")!;
    expect(recovered.data).toEqual(failing.data);
    expect(about(events, recoveringBroken.e).filter((t) => t !== "delivery.exhausted")).toEqual([
      "endpoint.failing",
      "endpoint.recovered",
    ]);
  });

  it("a failing streak: delivery.exhausted, endpoint.failing once, then endpoint.disabled (failing), once each though three processes report", async () => {
    const ops = streakOps;
    const broken = streakBroken.e;
    await ops.rx.waitFor((rs) =>
      rs.some((r) => envelope(r).type === "endpoint.disabled" && envelope(r).resource_id === broken.id),
    );
    expect(ops.rx.requests.every((r) => r.verdict.ok)).toBe(true);
    const events = operationalAt(ops.rx);
    // Each once, and endpoint.disabled (a job run 40 s into the streak) after endpoint.failing (the first
    // run 1 s in). delivery.exhausted and endpoint.failing are independent occurrences, the third
    // attempt's failure (0.6 s in, later on a busy machine) and that first job run: either may arrive first.
    const kinds = about(events, broken);
    expect(kinds.toSorted()).toEqual(["delivery.exhausted", "endpoint.disabled", "endpoint.failing"]);
    expect(kinds.slice(-1)).toEqual(["endpoint.disabled"]);
    // The dead operations endpoint below is disabled too, maybe by the same job run: pick broken's own.
    const failing = events.find((e) => e.type === "endpoint.failing" && e.resource_id === broken.id)!;
    const disabled = events.find((e) => e.type === "endpoint.disabled" && e.resource_id === broken.id)!;
    expect(failing.data).toMatchObject({ endpoint_id: broken.id, url: streakBroken.rx.url });
    expect(disabled.data).toMatchObject({
      endpoint_id: broken.id,
      disabled_reason: "failing",
      failing_since: (failing.data as { failing_since: string }).failing_since,
    });
    // The failing endpoint, subscribed to all four, never received one.
    expect(streakBroken.rx.requests.every((r) => envelope(r).type === "message.sent")).toBe(true);

    // The dead operations endpoint got the same events and failed them all, through their whole
    // schedule and past several job runs: nothing about it but, once, its own disable.
    const dead = deadOps.e;
    expect(about(events, dead).filter((t) => t !== "endpoint.disabled")).toEqual([]);
    expect(deadOps.rx.requests.every((r) => envelope(r).resource_id !== dead.id)).toBe(true);
    const toDead = await allDeliveries(streak.client, dead.id);
    expect(toDead.length).toBeGreaterThan(0);
    expect(toDead.every((d) => d.status !== "succeeded")).toBe(true);
  });

  it("refuses to publish an operational type: 422 naming `body.type`", async () => {
    const p = await project();
    const r = await fetch(`${herald[0]!.baseUrl}/api/v1/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${p.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        type: "endpoint.disabled",
        data: {
          endpoint_id: randomUUID(),
          url: "https://x.example/",
          disabled_reason: "manual",
          disabled_at: new Date().toISOString(),
        },
      }),
    });
    expect(r.status).toBe(422);
    const problem = (await r.json()) as { code: string; errors: { path: string }[] };
    expect(problem.code).toBe("validation_failed");
    expect(problem.errors.map((e) => e.path)).toEqual(["body.type"]);
  });
});
