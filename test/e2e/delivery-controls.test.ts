import { randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHeraldClient, unwrap } from "../../clients/typescript/client.ts";
import type { HeraldProcess } from "../support/herald-process.ts";
import { type ReceivedRequest, type Receiver, startReceiver } from "../support/receiver.ts";
import {
  allDeliveries,
  type DeliveryWorld,
  deliveryWorld,
  eventBody,
  publishRaw,
  waitUntil,
} from "./delivery-support.ts";

// Issue 11, items 4 and 5, against a real Herald process and a real HTTPS receiver on loopback: the
// Standard Webhooks signature is checked by the specification's own library (standardwebhooks on npm),
// the herald-v1 one by the receiver's independent node:crypto check, custom headers by what arrives.
const API_KEY = "rk_e2e_3c1d9f7a-do-not-log";

function standardVerdict(req: ReceivedRequest, secret: string): string {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
  try {
    new Webhook(secret).verify(req.body.toString("utf8"), headers);
    return "ok";
  } catch (e) {
    return (e as Error).message;
  }
}

describe("signature schemes and custom headers (real process, HTTPS receiver)", () => {
  let world: DeliveryWorld;
  let herald: HeraldProcess;
  let rx: Receiver;

  beforeAll(async () => {
    world = await deliveryWorld("e2e_controls", { HERALD_LOG_LEVEL: "debug" });
    herald = await world.start();
  });

  afterAll(async () => {
    await rx?.close();
    await world?.close();
  });

  it("delivers in standard-webhooks mode with the custom headers, through a rotation and a switch back to herald-v1", async () => {
    const token = await world.newToken();
    const api = createHeraldClient({ baseUrl: herald.baseUrl, token });
    // The receiver answers 200 only to what the scheme's verifier accepts; secrets are filled in below.
    const secrets: string[] = [];
    let standard = true;
    rx = await startReceiver({
      tls: world.tls,
      secrets,
      behaviour: (req) => {
        const ok = standard
          ? secrets.some((s) => standardVerdict(req as ReceivedRequest, s) === "ok")
          : req.verdict.ok;
        return { kind: "respond", status: ok ? 200 : 401, body: ok ? "ok" : "unverified" };
      },
    });
    const created = await unwrap(
      api.POST("/api/v1/webhooks", {
        body: {
          url: rx.url,
          events: ["message.delivered"],
          headers: { Authorization: `Bearer ${API_KEY}`, "X-Tenant-Route": "eu-1" },
          signature_scheme: "standard-webhooks",
        },
      }),
    );
    secrets.push(created.secret);
    expect(created.headers).toEqual({ Authorization: "********", "X-Tenant-Route": "********" });

    const publish = async () => {
      const r = await publishRaw(herald.baseUrl, token, eventBody("message.delivered"), randomUUID());
      expect(r.status).toBe(202);
      return r.id!;
    };
    const succeeded = (eventId: string) =>
      waitUntil(
        async () =>
          (await allDeliveries(api, created.id, { event_id: eventId })).some((d) => d.status === "succeeded"),
        () => `a succeeded delivery of ${eventId}`,
      );

    // 1. Standard Webhooks, one secret.
    const first = await publish();
    const [one] = await rx.waitFor(1);
    expect(standardVerdict(one!, created.secret)).toBe("ok");
    expect(one!.headers["webhook-id"]).toBe(first);
    expect(one!.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(one!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(one!.headers["x-tenant-route"]).toBe("eu-1");
    expect(Object.keys(one!.headers).filter((n) => n.startsWith("x-webhook-"))).toEqual([]);
    await succeeded(first);

    // 2. A rotation with a grace period: two signatures, each verified by the library with its own secret.
    const rotated = await unwrap(
      api.POST("/api/v1/webhooks/{id}/rotate", {
        params: { path: { id: created.id } },
        body: { grace_period_seconds: 3600 },
      }),
    );
    const second = await publish();
    const [, two] = await rx.waitFor(2);
    expect(two!.headers["webhook-id"]).toBe(second);
    expect(String(two!.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(standardVerdict(two!, rotated.secret)).toBe("ok");
    expect(standardVerdict(two!, created.secret)).toBe("ok");
    expect(standardVerdict(two!, "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")).not.toBe("ok");
    await succeeded(second);

    // 3. Back to herald-v1, one header removed: the seed's headers, verified independently of Herald.
    standard = false;
    secrets.splice(0, secrets.length, rotated.secret);
    const patched = await unwrap(
      api.PATCH("/api/v1/webhooks/{id}", {
        params: { path: { id: created.id } },
        body: { signature_scheme: "herald-v1", headers: { "X-Tenant-Route": null } },
      }),
    );
    expect(patched.headers).toEqual({ Authorization: "********" });
    const third = await publish();
    const [, , three] = await rx.waitFor(3);
    expect(three!.verdict).toEqual({ ok: true, matches: [{ signature: 0, secret: 0 }] });
    expect(three!.headers["x-webhook-id"]).toBe(third);
    expect(three!.headers["x-webhook-signature"]).toMatch(/^v1=[0-9a-f]{64} v1=[0-9a-f]{64}$/);
    expect(three!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(three!.headers["x-tenant-route"]).toBeUndefined();
    expect(Object.keys(three!.headers).filter((n) => n.startsWith("webhook-"))).toEqual([]);
    await succeeded(third);

    // Sealed at rest, never logged (the process logs at debug level here).
    const [row] = await world.sql<{ signature_scheme: string; headers: { name: string }[] }[]>`
      SELECT * FROM endpoints WHERE id = ${created.id}`;
    expect(row?.signature_scheme).toBe("herald-v1");
    expect(row?.headers.map((h) => h.name)).toEqual(["Authorization"]);
    expect(JSON.stringify(row)).not.toContain(API_KEY);
    expect(herald.output()).not.toContain(API_KEY);
    expect(rx.requests.every((r) => r.behaviour.kind === "respond" && r.behaviour.status === 200)).toBe(true);
  });
});
