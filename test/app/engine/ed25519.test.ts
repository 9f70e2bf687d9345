import { describe, expect, it } from "vitest";
import { SignatureMismatchError, verifyWebhook } from "../../../clients/typescript/verify.ts";
import { nodeEd25519 } from "../../../src/adapters/delivery/node-ed25519.ts";
import { nodeHmac } from "../../../src/adapters/delivery/node-hmac.ts";
import { deliveryHeaders } from "../../../src/adapters/delivery/outcome.ts";
import type { DeliveryRequest } from "../../../src/app/ports/sending.ts";
import { signedHeaders } from "../../../src/domain/signature-scheme.ts";
import { SCOPE, sampleMessage, scriptedSender } from "../../support/engine-harness.ts";
import { setup as startedHarness } from "./engine-suite.ts";

/** What went over the wire for each attempt: the headers as the fetch sender (Web Crypto) and the undici sender (node:crypto) make them. */
interface Sent {
  request: DeliveryRequest;
  webCrypto: Record<string, string>;
  node: Record<string, string>;
}

async function setup() {
  const sent: Sent[] = [];
  const sender = scriptedSender(async (request) => {
    sent.push({
      request,
      webCrypto: await deliveryHeaders(request, "Herald/test"),
      node: Object.fromEntries(signedHeaders(request, nodeHmac, nodeEd25519)),
    });
    return { ok: true, responseStatus: 200 };
  });
  return { t: await startedHarness({ sender }), sent };
}

describe("Ed25519 endpoints (standard-webhooks-ed25519) through the engine", () => {
  it("deliver a v1a signature the receiver verifies with the public key; rotation signs with both keys for the grace period", async () => {
    const { t, sent } = await setup();
    const { endpoint, secret: shown } = await t.endpoints.create(SCOPE, {
      url: "https://hooks.example.com/ed",
      events: ["message.delivered"],
      signatureScheme: "standard-webhooks-ed25519",
    });
    const first = (await t.endpoints.publicKeys([endpoint])).get(endpoint.id)!;
    expect(first).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(shown).toBe(first);

    const receive = async (publicKeys: string | string[]) => {
      const last = sent.at(-1)!;
      // Both senders put the same bytes on the wire (Ed25519 is deterministic).
      expect(last.node["webhook-signature"]).toBe(last.webCrypto["webhook-signature"]);
      return verifyWebhook({
        body: last.request.body,
        headers: last.webCrypto,
        publicKeys,
        scheme: "standard-webhooks-ed25519",
        now: t.clock.now(),
      });
    };

    const a = await t.events.publish(SCOPE, { type: "message.delivered", data: sampleMessage() });
    await t.drain();
    expect(sent).toHaveLength(1);
    expect(Object.keys(sent[0]!.webCrypto)).toEqual(
      expect.arrayContaining(["webhook-id", "webhook-timestamp", "webhook-signature"]),
    );
    expect(sent[0]!.webCrypto["webhook-signature"]).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    expect((await receive(first)).id).toBe(a.envelope.id);

    const rotated = await t.endpoints.rotate(SCOPE, endpoint.id, 60);
    const second = rotated.secret;
    expect(second).not.toBe(first);
    expect((await t.endpoints.publicKeys([rotated.endpoint])).get(endpoint.id)).toBe(second);
    await t.events.publish(SCOPE, { type: "message.delivered", data: sampleMessage() });
    await t.drain();
    expect(sent).toHaveLength(2);
    // Two entries, new key first, separated by a space: a receiver holding either public key verifies.
    const entries = sent[1]!.webCrypto["webhook-signature"]!.split(" ");
    expect(entries).toHaveLength(2);
    for (const e of entries) expect(e).toMatch(/^v1a,/);
    await receive(first);
    await receive(second);

    t.clock.advance(61_000);
    await t.events.publish(SCOPE, { type: "message.delivered", data: sampleMessage() });
    await t.drain();
    expect(sent).toHaveLength(3);
    expect(sent[2]!.webCrypto["webhook-signature"]!.split(" ")).toHaveLength(1);
    await receive(second);
    await expect(receive(first)).rejects.toBeInstanceOf(SignatureMismatchError);
    const history = await t.history(endpoint.id);
    expect(history.map((d) => d.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
  });

  it("switching to an HMAC scheme signs the next delivery with the new secret only", async () => {
    const { t, sent } = await setup();
    const { endpoint } = await t.endpoints.create(SCOPE, {
      url: "https://hooks.example.com/ed",
      events: ["message.delivered"],
      signatureScheme: "standard-webhooks-ed25519",
    });
    const changed = await t.endpoints.change(SCOPE, endpoint.id, { signatureScheme: "standard-webhooks" });
    expect(changed.secret).toMatch(/^whsec_/);
    expect(changed.endpoint.secrets).toHaveLength(1);
    await t.events.publish(SCOPE, { type: "message.delivered", data: sampleMessage() });
    await t.drain();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.webCrypto["webhook-signature"]).toMatch(/^v1,[^ ]+$/);
    const envelope = await verifyWebhook({
      body: sent[0]!.request.body,
      headers: sent[0]!.webCrypto,
      secrets: changed.secret!,
      scheme: "standard-webhooks",
      now: t.clock.now(),
    });
    expect(envelope.type).toBe("message.delivered");
  });
});
