import { describe, expect, it } from "vitest";
import { unwrap } from "../../../../../clients/typescript/client.ts";
import type { components } from "../../../../../clients/typescript/schema.d.ts";
import {
  ChangedWebhookSchema,
  WebhookWithSecretSchema,
} from "../../../../../src/adapters/http/routes/webhooks/schema.ts";
import {
  DELIVERED,
  expectInvalid,
  expectWebhook,
  receiverUrl,
  SECRET,
  type Suite,
  WEBHOOK_KEYS,
} from "./context.ts";

const PUBLIC_KEY = /^whpk_[A-Za-z0-9+/]{43}=$/;
const ED25519 = "standard-webhooks-ed25519";

/** No answer may hold an Ed25519 private key (sealed as whsk_ed25519_…) or any whsk_ text at all. */
function expectNoPrivateKey(text: string) {
  expect(text).not.toMatch(/whsk_/i);
  expect(text).not.toContain("pkcs8");
}

/** An answer that issued a key: the endpoint, and `secret` (here the public key) beside it. */
function expectIssued(body: unknown) {
  expect(Object.keys(body as object).sort()).toEqual([...WEBHOOK_KEYS, "secret"].sort());
  return WebhookWithSecretSchema.parse(body);
}

/** The API suite's cases for Ed25519 endpoints (Standard Webhooks v1a; issue 19, item 2). */
export function asymmetricSignatureCases(s: Suite): void {
  const { newProject, send } = s;
  describe("webhooks: asymmetric (Ed25519) signatures", () => {
    it("POST /webhooks with standard-webhooks-ed25519 answers a whpk_ public key, readable in every later answer", async () => {
      const { api, token } = await newProject();
      const created = await send("POST", "/api/v1/webhooks", {
        token,
        json: { url: receiverUrl(), events: [DELIVERED], signature_scheme: ED25519 },
      });
      expect(created.response.status).toBe(201);
      const w = expectIssued(created.error);
      expect(w.signature_scheme).toBe(ED25519);
      expect(w.public_key).toMatch(PUBLIC_KEY);
      // What the receiver verifies with, issued now: the public key; there is no secret to show.
      expect(w.secret).toBe(w.public_key);
      const path = { id: w.id };
      const got = expectWebhook(await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path } })));
      expect(got.public_key).toBe(w.public_key);
      const listed = await send("GET", "/api/v1/webhooks", { token });
      expect(JSON.parse(listed.text).data.map((x: { public_key: string }) => x.public_key)).toEqual([
        w.public_key,
      ]);
      const enabled = await send("POST", `/api/v1/webhooks/${w.id}/enable`, { token });
      expect(expectWebhook(enabled.error).public_key).toBe(w.public_key);
      const patched = await send("PATCH", `/api/v1/webhooks/${w.id}`, { token, json: { description: "x" } });
      expect(expectWebhook(patched.error).public_key).toBe(w.public_key);
      for (const text of [created.text, listed.text, enabled.text, patched.text]) expectNoPrivateKey(text);
    });

    it("HMAC endpoints have no public key", async () => {
      const { api } = await newProject();
      for (const scheme of ["herald-v1", "standard-webhooks"] as const) {
        const w = await unwrap(
          api.POST("/api/v1/webhooks", {
            body: { url: receiverUrl(), events: [DELIVERED], signature_scheme: scheme },
          }),
        );
        expect(w.public_key).toBeNull();
        expect(w.secret).toMatch(SECRET);
      }
    });

    it("POST /webhooks/{id}/rotate issues a new key pair; the answer's public key is the new one", async () => {
      const { api, token } = await newProject();
      const w = await unwrap(
        api.POST("/api/v1/webhooks", {
          body: { url: receiverUrl(), events: [DELIVERED], signature_scheme: ED25519 },
        }),
      );
      const rotated = await send("POST", `/api/v1/webhooks/${w.id}/rotate`, {
        token,
        json: { grace_period_seconds: 3600 },
      });
      expect(rotated.response.status).toBe(200);
      const r = expectIssued(rotated.error);
      expect(r.public_key).toMatch(PUBLIC_KEY);
      expect(r.public_key).not.toBe(w.public_key);
      expect(r.secret).toBe(r.public_key);
      const got = await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } }));
      expect(got.public_key).toBe(r.public_key);
      const again = await send("POST", `/api/v1/webhooks/${w.id}/rotate`, { token, json: {} });
      expect(expectIssued(again.error).public_key).not.toBe(r.public_key);
      for (const text of [rotated.text, again.text]) expectNoPrivateKey(text);
    });

    it("PATCH signature_scheme across key kinds issues a key of the new kind; within a kind keeps the key", async () => {
      const { api, token } = await newProject();
      const w = await unwrap(
        api.POST("/api/v1/webhooks", { body: { url: receiverUrl(), events: [DELIVERED] } }),
      );
      const patch = async (body: components["schemas"]["UpdateWebhookRequest"]) => {
        const res = await send("PATCH", `/api/v1/webhooks/${w.id}`, { token, json: body });
        expect(res.response.status).toBe(200);
        expectNoPrivateKey(res.text);
        return ChangedWebhookSchema.parse(res.error);
      };
      // HMAC to Ed25519: a key pair is issued, its public key shown as secret and public_key.
      const ed = await patch({ signature_scheme: ED25519 });
      expect(ed.public_key).toMatch(PUBLIC_KEY);
      expect(ed.secret).toBe(ed.public_key);
      // Within Ed25519, or any other change: no key issued, the key kept.
      const same = await patch({ signature_scheme: ED25519, description: "same" });
      expect(same.secret).toBeUndefined();
      expect(same.public_key).toBe(ed.public_key);
      // Ed25519 to HMAC: a new secret, shown in this answer only; no public key any more.
      const hmac = await patch({ signature_scheme: "standard-webhooks" });
      expect(hmac.secret).toMatch(SECRET);
      expect(hmac.public_key).toBeNull();
      const got = await send("GET", `/api/v1/webhooks/${w.id}`, { token });
      expect(got.text).not.toContain(hmac.secret!);
      // Between the HMAC schemes the secret stays: nothing is issued.
      const v1 = await patch({ signature_scheme: "herald-v1" });
      expect(v1.secret).toBeUndefined();
      // And back to Ed25519: a fresh key pair, not the first one.
      const back = await patch({ signature_scheme: ED25519 });
      expect(back.public_key).toMatch(PUBLIC_KEY);
      expect(back.public_key).not.toBe(ed.public_key);
      expect((await unwrap(api.GET("/api/v1/webhooks"))).data[0]!.public_key).toBe(back.public_key);
    });

    it("refuses an unknown scheme and a client-set public_key with 422 naming the path", async () => {
      const { token } = await newProject();
      for (const json of [
        { url: receiverUrl(), events: [DELIVERED], signature_scheme: "ed25519" },
        { url: receiverUrl(), events: [DELIVERED], signature_scheme: "v1a" },
      ]) {
        expectInvalid(await send("POST", "/api/v1/webhooks", { token, json }), ["body.signature_scheme"]);
      }
      expectInvalid(
        await send("POST", "/api/v1/webhooks", {
          token,
          json: { url: receiverUrl(), events: [DELIVERED], public_key: `whpk_${"A".repeat(43)}=` },
        }),
        ["body.public_key"],
      );
    });
  });
}
