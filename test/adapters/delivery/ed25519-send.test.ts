import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignatureMismatchError, verifyWebhook } from "../../../clients/typescript/verify.ts";
import { createFetchSender } from "../../../src/adapters/delivery/fetch-sender.ts";
import { createUndiciSender } from "../../../src/adapters/delivery/undici-sender.ts";
import type { Sender } from "../../../src/app/ports/sending.ts";
import { ed25519PublicKey, newEd25519Secret } from "../../../src/domain/standard-webhooks-ed25519.ts";
import { behaviours, type Receiver, startReceiver } from "../../support/receiver.ts";
import { testTls } from "../../support/tls.ts";
import { delivery } from "./helpers.ts";

// Both senders over a real connection: the receiver checks the v1a signatures it got with the public
// keys alone, as a customer's receiver would.
const KEY = newEd25519Secret(crypto.getRandomValues(new Uint8Array(32)));
const OLD = newEd25519Secret(crypto.getRandomValues(new Uint8Array(32)));
const BODY = JSON.stringify({
  id: "evt_1",
  type: "message.delivered",
  version: "1",
  occurred_at: "2026-01-01T12:00:00.000Z",
  tenant_id: "5f0c6d3a-8b1e-4c2f-9a7d-1e2b3c4d5e6f",
  project_id: "9d8c7b6a-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
  resource_id: "0b6b4c1e-3f1a-4d5e-9c2b-7a8f9e0d1c2b",
  data: { note: "héllo ✓ 🚀" },
});

let https: Receiver;
let http: Receiver;
const senders: Sender[] = [];

beforeAll(async () => {
  const tls = await testTls();
  https = await startReceiver({ tls, secrets: [], behaviour: behaviours.status(200) });
  http = await startReceiver({ secrets: [], behaviour: behaviours.status(200) });
  senders.push(
    createUndiciSender({
      timeoutMs: 3_000,
      allowPrivateNetworks: true,
      userAgent: "Herald/t",
      ca: tls.caCert,
    }),
    createFetchSender({ timeoutMs: 3_000, allowPrivateNetworks: true, userAgent: "Herald/t" }),
  );
});

afterAll(async () => {
  await Promise.all([...senders.map((s) => s.close()), https?.close(), http?.close()]);
});

describe("standard-webhooks-ed25519 over the wire", () => {
  it.each([
    ["undici (node:crypto)", 0, () => https],
    ["fetch (Web Crypto)", 1, () => http],
  ] as const)("the %s sender's v1a signatures verify with the public keys", async (_name, which, rx) => {
    const before = rx().requests.length;
    const outcome = await senders[which]!.send(
      delivery(rx().url, { body: BODY, secrets: [KEY, OLD], scheme: "standard-webhooks-ed25519" }),
    );
    expect(outcome.ok).toBe(true);
    const [got] = (await rx().waitFor(before + 1)).slice(before);
    expect(got!.headers["webhook-signature"]).toMatch(/^v1a,[A-Za-z0-9+/]{86}== v1a,[A-Za-z0-9+/]{86}==$/);
    expect(got!.headers["x-webhook-signature"]).toBeUndefined();
    const check = (publicKeys: string) =>
      verifyWebhook({
        body: got!.body,
        headers: got!.headers,
        publicKeys,
        scheme: "standard-webhooks-ed25519",
      });
    for (const key of [KEY, OLD]) expect((await check(await ed25519PublicKey(key))).id).toBe("evt_1");
    const stranger = await ed25519PublicKey(newEd25519Secret(new Uint8Array(32)));
    await expect(check(stranger)).rejects.toBeInstanceOf(SignatureMismatchError);
  });
});
