import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createHeraldClient,
  type Delivery,
  type EventType,
  type HeraldClient,
  unwrap,
  type WebhookWithSecret,
} from "../../clients/typescript/client.ts";
import { VERSION } from "../../src/version.ts";
import type { HeraldProcess } from "../support/herald-process.ts";
import {
  type BehaviourFn,
  behaviours,
  type ReceivedRequest,
  type Receiver,
  startReceiver,
  verifyDelivery,
} from "../support/receiver.ts";
import {
  allDeliveries,
  createEndpoint,
  type DeliveryWorld,
  deliveryWorld,
  eventBody,
  eventIdOf,
  publishRaw,
  waitUntil,
} from "./delivery-support.ts";

// Issue 3 / CONTRACT §5, each rule against a real Herald process and a real HTTPS receiver that
// verifies every signature on its own (node:crypto, not Herald's signer). Every test works in a
// tenant and project of its own, so no event of one reaches another's endpoint.
const RETRY_MS = 1_000;

describe("delivery rules (real process, HTTPS receiver)", () => {
  let world: DeliveryWorld;
  let herald: HeraldProcess;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    world = await deliveryWorld("e2e_rules", {
      HERALD_RETRY_SCHEDULE: "1s,1s,1s",
      HERALD_DELIVERY_TIMEOUT: "5s",
    });
    herald = await world.start();
  });

  afterAll(async () => {
    await Promise.allSettled(receivers.map((r) => r.close()));
    await world?.close();
  });

  interface Setup {
    token: string;
    client: HeraldClient;
    rx: Receiver;
    endpoint: WebhookWithSecret;
    /** The secrets the receiver accepts (the endpoint's first one). */
    secrets: string[];
    publish(type?: EventType): Promise<string>;
    /** This endpoint's records of one event, by attempt, once `done` holds for them. */
    records(eventId: string, done: (list: Delivery[]) => boolean, what: string): Promise<Delivery[]>;
  }

  async function setup(events: EventType[], behaviour?: BehaviourFn): Promise<Setup> {
    const token = await world.newToken();
    const client = createHeraldClient({ baseUrl: herald.baseUrl, token });
    const secrets: string[] = [];
    const rx = await startReceiver({ tls: world.tls, secrets, ...(behaviour ? { behaviour } : {}) });
    receivers.push(rx);
    const endpoint = await createEndpoint(client, rx.url, events);
    secrets.push(endpoint.secret);
    return {
      token,
      client,
      rx,
      endpoint,
      secrets,
      async publish(type = events[0]!) {
        const r = await publishRaw(herald.baseUrl, token, eventBody(type), randomUUID());
        expect(r.status).toBe(202);
        return r.id!;
      },
      async records(eventId, done, what) {
        let list: Delivery[] = [];
        await waitUntil(
          async () => {
            list = (await allDeliveries(client, endpoint.id, { event_id: eventId })).sort(
              (a, b) => a.attempt - b.attempt,
            );
            return done(list);
          },
          () => `${what}; records so far: ${JSON.stringify(list.map((d) => [d.attempt, d.status, d.error]))}`,
        );
        return list;
      },
    };
  }

  const ms = (iso: string | null | undefined) => new Date(iso!).getTime();
  const header = (r: ReceivedRequest, name: string) => String(r.headers[name] ?? "");

  it("sends exactly the contract's headers, signed over the exact body bytes, and records the success", async () => {
    const s = await setup(["message.delivered"]);
    const before = Math.floor(Date.now() / 1000);
    const id = await s.publish();
    const [req] = await s.rx.waitFor(1);
    const after = Math.ceil(Date.now() / 1000);

    expect(req!.method).toBe("POST");
    expect(req!.path).toBe("/webhook");
    expect(req!.verdict).toEqual({ ok: true, matches: [{ signature: 0, secret: 0 }] });
    expect(header(req!, "content-type")).toBe("application/json");
    expect(header(req!, "user-agent")).toBe(`Herald/${VERSION}`);
    expect(header(req!, "x-webhook-id")).toBe(id);
    expect(
      Object.keys(req!.headers)
        .filter((k) => k.startsWith("x-webhook-"))
        .sort(),
    ).toEqual(["x-webhook-id", "x-webhook-signature", "x-webhook-timestamp"]);
    const timestamp = header(req!, "x-webhook-timestamp");
    expect(timestamp).toMatch(/^\d+$/);
    expect(Number(timestamp)).toBeGreaterThanOrEqual(before);
    expect(Number(timestamp)).toBeLessThanOrEqual(after);
    // v1= + lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>", keyed with the whole whsec_ string.
    const signature = header(req!, "x-webhook-signature");
    expect(signature).toMatch(/^v1=[0-9a-f]{64}$/);
    const expected = createHmac("sha256", Buffer.from(s.endpoint.secret, "utf8"))
      .update(Buffer.concat([Buffer.from(`${timestamp}.`), req!.body]))
      .digest("hex");
    expect(signature).toBe(`v1=${expected}`);
    // The body is the stored envelope.
    const envelope = await unwrap(s.client.GET("/api/v1/events/{id}", { params: { path: { id } } }));
    expect(JSON.parse(req!.body.toString("utf8"))).toEqual(envelope);

    const [d] = await s.records(id, (l) => l[0]?.status === "succeeded", "a succeeded record");
    expect(d).toMatchObject({
      attempt: 1,
      trigger: "automatic",
      status: "succeeded",
      response_status: 200,
      error: null,
      next_attempt_at: null,
      url: s.rx.url,
      event_type: "message.delivered",
    });
    expect(d!.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("500 then 200: attempt 1 failed with next_attempt_at, attempt 2 succeeded with the same bytes", async () => {
    const s = await setup(["message.bounced"], (req) =>
      req.index === 0 ? behaviours.status(500, "boom") : behaviours.verify(req),
    );
    const id = await s.publish();
    const [first, second] = await s.rx.waitFor(2);
    expect(first!.verdict.ok && second!.verdict.ok).toBe(true);
    expect(second!.body.equals(first!.body)).toBe(true);
    expect(header(second!, "x-webhook-id")).toBe(id);
    // The schedule's first delay (1 s) with at most 20% jitter.
    expect(second!.receivedAt.getTime() - first!.receivedAt.getTime()).toBeGreaterThanOrEqual(
      RETRY_MS * 0.8 - 50,
    );

    const [a1, a2] = await s.records(
      id,
      (l) => l.length === 2 && l[1]!.status === "succeeded",
      "two attempts",
    );
    expect(a1).toMatchObject({
      attempt: 1,
      trigger: "automatic",
      status: "failed",
      response_status: 500,
      response_body: "boom",
      error: "http_status",
    });
    expect(a1!.next_attempt_at).not.toBeNull();
    expect(a2).toMatchObject({
      attempt: 2,
      trigger: "automatic",
      status: "succeeded",
      response_status: 200,
      next_attempt_at: null,
    });
    expect(a2!.scheduled_at).toBe(a1!.next_attempt_at);
    const delay = ms(a1!.next_attempt_at) - ms(a1!.attempted_at);
    expect(delay).toBeGreaterThanOrEqual(RETRY_MS * 0.8);
  });

  it("a 302 fails with error redirect and is not followed", async () => {
    const s = await setup(["message.sent"]);
    s.rx.setBehaviour((req) =>
      req.path === "/webhook" ? behaviours.redirect(`${s.rx.origin}/elsewhere`) : behaviours.verify(req),
    );
    const id = await s.publish();
    const [d] = await s.records(id, (l) => l[0]?.status === "failed", "a failed first attempt");
    expect(d).toMatchObject({ status: "failed", error: "redirect", response_status: 302 });
    expect(d!.next_attempt_at).not.toBeNull();
    expect(s.rx.requests.length).toBeGreaterThanOrEqual(1);
    expect(s.rx.requests.filter((r) => r.path !== "/webhook")).toEqual([]);
  });

  it("a 429 with Retry-After: 2 delays the next attempt by at least 2 s", async () => {
    const s = await setup(["message.deferred"], (req) =>
      req.index === 0 ? behaviours.retryAfter(429, "2") : behaviours.verify(req),
    );
    const id = await s.publish();
    const [first, second] = await s.rx.waitFor(2);
    expect(second!.receivedAt.getTime() - first!.receivedAt.getTime()).toBeGreaterThanOrEqual(2_000);
    const [a1, a2] = await s.records(
      id,
      (l) => l.length === 2 && l[1]!.status === "succeeded",
      "two attempts",
    );
    expect(a1).toMatchObject({ status: "failed", response_status: 429, error: "http_status" });
    expect(ms(a1!.next_attempt_at) - ms(a1!.attempted_at)).toBeGreaterThanOrEqual(2_000);
    expect(a2!.status).toBe("succeeded");
  });

  it("a 410 disables the endpoint (gone), later events are skipped, enable brings delivery back", async () => {
    const s = await setup(["message.failed"], () => behaviours.gone());
    const gone = await s.publish();
    await s.rx.waitFor(1);
    const [g] = await s.records(gone, (l) => l[0]?.status === "failed", "the 410 recorded");
    expect(g).toMatchObject({ status: "failed", response_status: 410, next_attempt_at: null });
    const get = () =>
      unwrap(s.client.GET("/api/v1/webhooks/{id}", { params: { path: { id: s.endpoint.id } } }));
    await waitUntil(
      async () => (await get()).enabled === false,
      () => "the endpoint is still enabled",
    );
    expect(await get()).toMatchObject({ enabled: false, disabled_reason: "gone" });

    // While disabled: a skipped record, nothing sent; a manual retry is refused.
    const skipped = await s.publish();
    const [k] = await s.records(
      skipped,
      (l) => l.length === 1,
      "a record for the event published while disabled",
    );
    expect(k).toMatchObject({ status: "skipped", attempt: 1 });
    const refused = await s.client.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", {
      params: { path: { delivery_id: k!.id } },
    });
    expect(refused.response.status).toBe(409);
    expect((refused.error as { code: string }).code).toBe("endpoint_disabled");

    s.rx.setBehaviour(behaviours.verify);
    const enabled = await unwrap(
      s.client.POST("/api/v1/webhooks/{id}/enable", { params: { path: { id: s.endpoint.id } } }),
    );
    expect(enabled).toMatchObject({ enabled: true, disabled_reason: null });
    const fresh = await s.publish();
    await s.rx.waitFor((all) => all.some((r) => eventIdOf(r) === fresh));
    // After enable, the skipped one can be sent by hand.
    await unwrap(
      s.client.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", {
        params: { path: { delivery_id: k!.id } },
      }),
    );
    await s.rx.waitFor((all) => all.some((r) => eventIdOf(r) === skipped));
    // The 410 was never retried; the skipped event was sent only by hand.
    expect(s.rx.requests.filter((r) => eventIdOf(r) === gone)).toHaveLength(1);
    expect(s.rx.requests.filter((r) => eventIdOf(r) === skipped)).toHaveLength(1);
    expect(s.rx.requests.every((r) => r.verdict.ok)).toBe(true);
  });

  it("a manual retry is sent, same id and bytes, fresh signature, trigger manual", async () => {
    const s = await setup(["message.opened"]);
    const id = await s.publish();
    const [first] = await s.rx.waitFor(1);
    const [d1] = await s.records(id, (l) => l[0]?.status === "succeeded", "the first attempt recorded");
    const asked = Date.now();
    const retry = await unwrap(
      s.client.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", {
        params: { path: { delivery_id: d1!.id } },
      }),
    );
    expect(retry).toMatchObject({
      trigger: "manual",
      status: "pending",
      attempt: 2,
      event_id: id,
      webhook_id: s.endpoint.id,
    });
    // How soon it arrives is for the benchmark; here, that it arrives, as a manual attempt of the same bytes.
    const all = await s.rx.waitFor(2);
    const second = all[1]!;
    console.log(`rules: manual retry arrived ${second.receivedAt.getTime() - asked} ms after the call`);
    expect(header(second, "x-webhook-id")).toBe(id);
    expect(second.body.equals(first!.body)).toBe(true);
    expect(second.verdict.ok).toBe(true);
    expect(Number(header(second, "x-webhook-timestamp"))).toBeGreaterThanOrEqual(
      Number(header(first!, "x-webhook-timestamp")),
    );
    const list = await s.records(
      id,
      (l) => l.length === 2 && l[1]!.status === "succeeded",
      "the manual attempt recorded",
    );
    expect(list[1]).toMatchObject({ id: retry.id, trigger: "manual", status: "succeeded", attempt: 2 });
  });

  it("during a rotation grace period both signatures are sent; a receiver with only the old secret verifies", async () => {
    const s = await setup(["message.clicked"]);
    const old = s.endpoint.secret;
    const rotated = await unwrap(
      s.client.POST("/api/v1/webhooks/{id}/rotate", {
        params: { path: { id: s.endpoint.id } },
        body: { grace_period_seconds: 3600 },
      }),
    );
    expect(rotated.secret).not.toBe(old);
    await s.publish();
    const [req] = await s.rx.waitFor(1);
    const parts = header(req!, "x-webhook-signature").split(" ");
    expect(parts).toHaveLength(2);
    // The receiver knows only the old secret: it verifies through the second signature.
    expect(s.secrets).toEqual([old]);
    expect(req!.verdict).toEqual({ ok: true, matches: [{ signature: 1, secret: 0 }] });
    // One that knows only the new secret verifies through the first.
    expect(verifyDelivery(req!.headers, req!.body, [rotated.secret], Math.floor(Date.now() / 1000))).toEqual({
      ok: true,
      matches: [{ signature: 0, secret: 0 }],
    });
  });

  it("DELETE cancels what is owed and nothing more is sent", async () => {
    // 503 with Retry-After: 3 puts the second attempt 3 s out, well after the DELETE below.
    const s = await setup(["message.complained"], () => behaviours.retryAfter(503, "3"));
    const id = await s.publish();
    await s.rx.waitFor(1);
    const [, next] = await s.records(id, (l) => l.length === 2, "the second attempt scheduled");
    expect(next!.status).toBe("pending");
    const del = await s.client.DELETE("/api/v1/webhooks/{id}", { params: { path: { id: s.endpoint.id } } });
    expect(del.response.status).toBe(204);
    const sentBefore = s.rx.requests.length;

    const cancelled = await unwrap(
      s.client.GET("/api/v1/webhooks/deliveries/{delivery_id}", {
        params: { path: { delivery_id: next!.id } },
      }),
    );
    expect(cancelled.status).toBe("cancelled");
    // A new event of that type owes the deleted endpoint nothing.
    const r = await publishRaw(herald.baseUrl, s.token, eventBody("message.complained"), randomUUID());
    expect(r.status).toBe(202);
    // Quiet until well past the moment the cancelled attempt was due.
    const until = ms(next!.scheduled_at) + 1_500;
    await waitUntil(
      () => {
        if (s.rx.requests.length !== sentBefore)
          throw new Error("a request arrived after the endpoint was deleted");
        return Date.now() >= until;
      },
      () => "time did not pass",
    );
    expect(s.rx.requests.length).toBe(sentBefore);
  });

  it("with HERALD_ALLOW_PRIVATE_NETWORKS=false 127.0.0.1 is refused at registration and a name resolving to it is blocked before connecting", async () => {
    const blockedWorld = await deliveryWorld("e2e_rules_blocked", { HERALD_ALLOW_PRIVATE_NETWORKS: "false" });
    const rx = await startReceiver({ tls: blockedWorld.tls, secrets: [] });
    try {
      const p = await blockedWorld.start();
      const client = blockedWorld.client(p.baseUrl);
      // A literal loopback address is refused at registration; a name that resolves to loopback is
      // accepted there and blocked at send time.
      const byIp = await client.POST("/api/v1/webhooks", {
        body: { url: rx.url, events: ["domain.verified"] },
      });
      expect(byIp.response.status).toBe(422);
      expect(byIp.error).toMatchObject({ errors: [{ path: "body.url" }] });
      const byName = await createEndpoint(client, `https://localhost:${rx.port}/webhook`, [
        "domain.verified",
      ]);
      const r = await publishRaw(p.baseUrl, blockedWorld.token, eventBody("domain.verified"), randomUUID());
      expect(r.status).toBe(202);
      for (const e of [byName]) {
        let list: Delivery[] = [];
        await waitUntil(
          async () => {
            list = await allDeliveries(client, e.id, { event_id: r.id! });
            return list.some((d) => d.status === "failed");
          },
          () => `records: ${JSON.stringify(list)}`,
        );
        expect(list.find((d) => d.attempt === 1)).toMatchObject({
          status: "failed",
          error: "blocked_address",
          response_status: null,
        });
      }
      expect(rx.connections).toBe(0);
      expect(rx.requests).toHaveLength(0);
      expect(await p.stop()).toBe(0);
    } finally {
      await rx.close();
      await blockedWorld.close();
    }
  });
});
