import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHeraldClient, type Delivery, unwrap } from "../../clients/typescript/client.ts";
import type { HeraldProcess } from "../support/herald-process.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import {
  allDeliveries,
  createEndpoint,
  type DeliveryWorld,
  deliveryWorld,
  eventIdOf,
  publishRaw,
  waitUntil,
} from "./delivery-support.ts";

// ADR 15 end to end: a real Herald process on the run's database, real HTTPS receivers. Events about
// one recipient go to an endpoint that accepts them and to one that keeps failing (so retries are
// pending); the erasure must leave no trace of them in the API or the console, nothing of them may be
// sent afterwards, and none of it may come back when Herald is killed and started again.
const ADA = "Ada.Lovelace@example.com";
const BOB = "bob@example.com";

describe("erasure (real process, HTTPS receivers, restart)", () => {
  let world: DeliveryWorld;
  let herald: HeraldProcess;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    world = await deliveryWorld("e2e_erasure", {
      // The failing endpoint is retried every second for a long while: there is always a pending attempt.
      HERALD_RETRY_SCHEDULE: Array(30).fill("1s").join(","),
      HERALD_DELIVERY_TIMEOUT: "5s",
      // After the kill, the new process takes the dead one's shards over within seconds.
      HERALD_LEASE_MARGIN: "2s",
    });
    herald = await world.start();
  });

  afterAll(async () => {
    await Promise.allSettled(receivers.map((r) => r.close()));
    await world?.close();
  });

  /** Every page of the console a person would open to look for the subject, as one text. */
  async function consoleText(baseUrl: string, token: string, records: Delivery[], eventIds: string[]) {
    const signIn = await fetch(`${baseUrl}/console/sign-in`, {
      method: "POST",
      body: new URLSearchParams({ token }),
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      redirect: "manual",
    });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.getSetCookie()[0]!.split(";")[0]!;
    const pages = [
      "/console",
      "/console/deliveries",
      "/console/privacy",
      ...records.map((d) => `/console/deliveries/${d.id}`),
      ...eventIds.map((id) => `/console/events/${id}`),
    ];
    const texts: string[] = [];
    for (const path of pages) {
      const res = await fetch(`${baseUrl}${path}`, { headers: { Cookie: cookie }, redirect: "manual" });
      expect([200, 404], path).toContain(res.status);
      if (path.startsWith("/console/events/")) expect(res.status, path).toBe(404);
      texts.push(await res.text());
    }
    return texts.join("\n");
  }

  it("leaves nothing of the subject to see or send, before and after a restart", {
    timeout: 10 * PATIENCE_MS,
  }, async () => {
    // A project of its own on this database.
    const token = await world.newToken();
    const own = (baseUrl: string) => createHeraldClient({ baseUrl, token });

    const okSecrets: string[] = [];
    const failSecrets: string[] = [];
    const ok = await startReceiver({
      tls: world.tls,
      secrets: okSecrets,
      behaviour: (req) => ({ kind: "respond", status: 200, body: `accepted for ${recipientOf(req.body)}` }),
    });
    const failing = await startReceiver({
      tls: world.tls,
      secrets: failSecrets,
      behaviour: (req) => ({ kind: "respond", status: 500, body: `no mailbox ${recipientOf(req.body)}` }),
    });
    receivers.push(ok, failing);
    const c1 = own(herald.baseUrl);
    const okEndpoint = await createEndpoint(c1, ok.url, ["message.delivered"]);
    const failEndpoint = await createEndpoint(c1, failing.url, ["message.delivered"]);
    okSecrets.push(okEndpoint.secret);
    failSecrets.push(failEndpoint.secret);

    const publish = async (recipient: string) => {
      const r = await publishRaw(
        herald.baseUrl,
        token,
        {
          type: "message.delivered",
          data: {
            message_id: randomUUID(),
            status: "delivered",
            channel: "email",
            message_type: "transactional",
            recipient,
          },
        },
        randomUUID(),
      );
      expect(r.status).toBe(202);
      return r.id!;
    };
    const adaEvents = [await publish(ADA), await publish(ADA.toLowerCase()), await publish(ADA)];
    const bobEvents = [await publish(BOB), await publish(BOB)];
    const all = [...adaEvents, ...bobEvents];

    // Every event reached the accepting endpoint, and failed at the other at least once (retries pending).
    await waitUntil(
      () => all.every((id) => ok.requests.some((r) => eventIdOf(r) === id)),
      () => `the accepting endpoint got ${ok.requests.length} of ${all.length}`,
    );
    await waitUntil(
      () => all.every((id) => failing.requests.some((r) => eventIdOf(r) === id)),
      () => `the failing endpoint got ${failing.requests.length}`,
    );
    // The receivers' answers carry the address: the records hold it until the erasure.
    const before = await allDeliveries(c1, failEndpoint.id);
    expect(before.some((d) => d.response_body?.includes(ADA))).toBe(true);
    expect(before.some((d) => d.status === "pending" && adaEvents.includes(d.event_id))).toBe(true);

    const erased = await unwrap(
      c1.POST("/api/v1/erasures", { body: { recipient: ` ${ADA.toUpperCase()} ` } }),
    );
    const erasedAt = Date.now();
    expect(erased).toMatchObject({ subject: "recipient", resource_id: null, events_erased: 3 });
    expect(erased.deliveries_cancelled).toBeGreaterThanOrEqual(1);
    const sentOfAda = () =>
      [...ok.requests, ...failing.requests].filter((r) => adaEvents.includes(eventIdOf(r)));
    // An attempt claimed before the erasure may still arrive just after it answered (ADR 15); a retry the
    // erasure failed to cancel would come every second, for 30 attempts, and be seen below.
    const GRACE_MS = 2_000;
    const late = () => sentOfAda().filter((r) => r.receivedAt.getTime() > erasedAt + GRACE_MS);

    /** What the API and the console show of the project, checked for any trace of the subject. */
    async function expectNoTrace(baseUrl: string) {
      const c = own(baseUrl);
      for (const id of adaEvents) {
        const res = await c.GET("/api/v1/events/{id}", { params: { path: { id } } });
        expect(res.response.status).toBe(404);
      }
      for (const id of bobEvents) {
        const res = await c.GET("/api/v1/events/{id}", { params: { path: { id } } });
        expect(res.response.status).toBe(200);
      }
      const records = [
        ...(await allDeliveries(c, okEndpoint.id)),
        ...(await allDeliveries(c, failEndpoint.id)),
      ];
      const ofAda = records.filter((d) => adaEvents.includes(d.event_id));
      expect(ofAda.length).toBeGreaterThanOrEqual(6);
      for (const d of ofAda) {
        expect(d.response_body).toBeNull();
        expect(d.status).not.toBe("pending");
      }
      // Every record the erasure met is marked; a follow-up of an attempt that was on the wire is
      // cancelled without a mark (ADR 15).
      expect(ofAda.filter((d) => d.erased_at === null).every((d) => d.status === "cancelled")).toBe(true);
      expect(ofAda.filter((d) => d.erased_at !== null).length).toBeGreaterThanOrEqual(6);
      const text = JSON.stringify(records).toLowerCase();
      expect(text).not.toContain(ADA.toLowerCase());
      expect(text).toContain(BOB);
      const erasedRecord = ofAda.find((d) => d.erased_at !== null)!;
      const retry = await c.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", {
        params: { path: { delivery_id: erasedRecord.id } },
      });
      expect(retry.response.status).toBe(409);
      const html = await consoleText(baseUrl, token, records, adaEvents);
      expect(html.toLowerCase()).not.toContain(ADA.toLowerCase());
      expect(html).toContain("Erased");
    }

    // Bob's events keep failing and being retried: once they have been retried twice more, the engine
    // has had every chance to send something of Ada's.
    const retriedTwice = async (since: number) => {
      const count = () =>
        failing.requests.filter((r) => bobEvents.includes(eventIdOf(r)) && r.receivedAt.getTime() > since)
          .length;
      await waitUntil(
        () => count() >= 2 * bobEvents.length,
        () => `bob's retries since: ${count()}`,
      );
    };
    await retriedTwice(erasedAt + GRACE_MS);
    expect(late()).toEqual([]);
    await expectNoTrace(herald.baseUrl);

    // A crash, and a new process on the same database: nothing comes back.
    await herald.kill();
    herald = await world.start();
    const restartedAt = Date.now();
    await retriedTwice(restartedAt);
    expect(late()).toEqual([]);
    await expectNoTrace(herald.baseUrl);
    // Recovering the failing endpoint's window replays Bob's events only.
    const recovery = await unwrap(
      own(herald.baseUrl).POST("/api/v1/webhooks/{id}/recover", {
        params: { path: { id: failEndpoint.id } },
        body: { since: new Date(restartedAt - 3_600_000).toISOString() },
      }),
    );
    expect(recovery.queued).toBeLessThanOrEqual(bobEvents.length);
    const manual = (await allDeliveries(own(herald.baseUrl), failEndpoint.id)).filter(
      (d) => d.trigger === "manual" && adaEvents.includes(d.event_id),
    );
    expect(manual).toEqual([]);
    const erasures = await unwrap(own(herald.baseUrl).GET("/api/v1/erasures"));
    expect(erasures.data.map((e) => e.id)).toEqual([erased.id]);
  });
});

/** The data.recipient of a delivered envelope (the receivers echo it, as real ones may). */
function recipientOf(body: Buffer): string {
  return String((JSON.parse(body.toString("utf8")) as { data: { recipient?: string } }).data.recipient);
}
