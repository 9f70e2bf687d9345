import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { unwrap } from "../../../../../clients/typescript/client.ts";
import type { components } from "../../../../../clients/typescript/schema.d.ts";
import { PATIENCE_MS } from "../../../../support/patience.ts";
import { ENCRYPTED_KEY_PASSPHRASE, type TestClientTls, testClientTls } from "../../../../support/tls.ts";
import {
  DELIVERED,
  expectInvalid,
  expectWebhook,
  expectWebhookWithSecret,
  messageData,
  publishBody,
  receiverUrl,
  type Suite,
} from "./context.ts";

type Input = components["schemas"]["CreateHttpsWebhookRequest"]["client_certificate"];

/** The base64 body of a PEM block: what must never appear in an answer for a private key. */
export const keyMaterial = (pem: string) =>
  pem
    .split("\n")
    .filter((l) => l && !l.startsWith("-----"))
    .join("");

/** The API suite's cases for an endpoint's client certificate (mutual TLS, issue 19 item 4). */
export function clientCertificateCases(s: Suite): void {
  const { newProject, send } = s;
  describe("webhooks: client certificate (mutual TLS)", () => {
    let tls: TestClientTls;
    const of = (cert: string, key: string, passphrase?: string): Input =>
      passphrase === undefined
        ? { certificate: cert, private_key: key }
        : { certificate: cert, private_key: key, passphrase };

    it("POST /webhooks takes a certificate and key; answers show its facts, never the key", async () => {
      tls = await testClientTls();
      const { api, token } = await newProject();
      const created = await api.POST("/api/v1/webhooks", {
        body: {
          url: receiverUrl(),
          events: [DELIVERED],
          client_certificate: of(tls.alice.cert, tls.alice.key),
        },
      });
      expect(created.response.status).toBe(201);
      const w = expectWebhookWithSecret(created.data);
      const x509 = new X509Certificate(tls.alice.cert);
      expect(w.client_certificate).toEqual({
        subject: "CN=alice",
        issuer: "CN=Herald Test Client CA clients",
        not_before: new Date(x509.validFrom).toISOString(),
        not_after: new Date(x509.validTo).toISOString(),
        fingerprint_sha256: x509.fingerprint256.toLowerCase(),
      });
      const path = { id: w.id };
      const got = expectWebhook(await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path } })));
      expect(got.client_certificate).toEqual(w.client_certificate);
      const listed = await send("GET", "/api/v1/webhooks", { token });
      const one = await send("GET", `/api/v1/webhooks/${w.id}`, { token });
      const patched = await send("PATCH", `/api/v1/webhooks/${w.id}`, { token, json: { description: "x" } });
      const rotated = await send("POST", `/api/v1/webhooks/${w.id}/rotate`, { token, json: {} });
      expect(JSON.parse(listed.text).data[0].client_certificate).toEqual(w.client_certificate);
      expect(JSON.parse(patched.text).client_certificate).toEqual(w.client_certificate);
      const secretPart = keyMaterial(tls.alice.key);
      for (const text of [JSON.stringify(created.data), listed.text, one.text, patched.text, rotated.text]) {
        expect(text).not.toContain(secretPart);
        expect(text).not.toContain(secretPart.slice(20, 60));
        expect(text).not.toContain("PRIVATE KEY");
      }
    });

    it("an endpoint without one shows null; PATCH replaces it, keeps it when absent, removes it with null", async () => {
      tls = await testClientTls();
      const { api } = await newProject();
      const w = await unwrap(
        api.POST("/api/v1/webhooks", { body: { url: receiverUrl(), events: [DELIVERED] } }),
      );
      expect(w.client_certificate).toBeNull();
      const path = { id: w.id };
      const patch = (body: components["schemas"]["UpdateWebhookRequest"]) =>
        unwrap(api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body }));
      expect(
        (await patch({ client_certificate: of(tls.alice.cert, tls.alice.key) })).client_certificate?.subject,
      ).toBe("CN=alice");
      expect(
        (await patch({ client_certificate: of(tls.bob.cert, tls.bob.key) })).client_certificate?.subject,
      ).toBe("CN=bob");
      expect((await patch({ description: "kept" })).client_certificate?.subject).toBe("CN=bob");
      expect((await patch({ client_certificate: null })).client_certificate).toBeNull();
      // An encrypted key is read with its passphrase, which is not kept.
      const enc = await patch({
        client_certificate: of(tls.alice.cert, tls.aliceEncryptedKey, ENCRYPTED_KEY_PASSPHRASE),
      });
      expect(enc.client_certificate?.subject).toBe("CN=alice");
      expect(JSON.stringify(enc)).not.toContain(ENCRYPTED_KEY_PASSPHRASE);
    });

    it("refuses bad certificates and keys with a 422 naming the field, quoting neither key nor passphrase", async () => {
      tls = await testClientTls();
      const { api, token } = await newProject();
      const create = (client_certificate: Input) =>
        api.POST("/api/v1/webhooks", {
          body: { url: receiverUrl(), events: [DELIVERED], client_certificate },
        });
      const at = (field: string) => `body.client_certificate.${field}`;
      const cases: [Input, string[]][] = [
        [of("not a certificate", tls.alice.key), [at("certificate")]],
        [of(tls.alice.cert, "not a key"), [at("private_key")]],
        // A key pasted with the certificate (kept in clear) is refused.
        [of(`${tls.alice.cert}${tls.alice.key}`, tls.alice.key), [at("certificate")]],
        [of(tls.alice.cert, `${tls.alice.key}${tls.bob.key}`), [at("private_key")]],
        // The key of another certificate.
        [of(tls.alice.cert, tls.bob.key), [at("private_key")]],
        [of(tls.expired.cert, tls.expired.key), [at("certificate")]],
        [of(tls.alice.cert, tls.aliceEncryptedKey), [at("passphrase")]],
        [of(tls.alice.cert, tls.aliceEncryptedKey, "wrong passphrase"), [at("passphrase")]],
        [of(tls.alice.cert, tls.alice.key, "needless"), [at("passphrase")]],
        // A certificate block whose content is not a certificate.
        [
          of("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", tls.alice.key),
          [at("certificate")],
        ],
        [of(`${tls.alice.cert}${"#".repeat(16_384)}`, tls.alice.key), [at("certificate")]],
        [of(tls.alice.cert, `${tls.alice.key}${" ".repeat(8_192)}`), [at("private_key")]],
      ];
      for (const [input, paths] of cases) {
        const res = await create(input);
        const errors = expectInvalid(res, paths);
        const text = JSON.stringify(res.error);
        expect(text).not.toContain(keyMaterial(tls.alice.key).slice(20, 60));
        expect(text).not.toContain(keyMaterial(tls.bob.key).slice(20, 60));
        expect(text).not.toContain("wrong passphrase");
        expect(errors.map((e) => e.message).join(" ")).not.toMatch(/error:[0-9A-F]{8}/i);
      }
      // The messages say what is wrong.
      const expired = expectInvalid(await create(of(tls.expired.cert, tls.expired.key)), [at("certificate")]);
      expect(expired[0]?.message).toContain("expired on 2020-01-02T00:00:00");
      const mismatch = expectInvalid(await create(of(tls.alice.cert, tls.bob.key)), [at("private_key")]);
      expect(mismatch[0]?.message).toContain("does not belong to the certificate");
      const missing = expectInvalid(await create(of(tls.alice.cert, tls.aliceEncryptedKey)), [
        at("passphrase"),
      ]);
      expect(missing[0]?.message).toContain("encrypted");
      // Fields it does not have, and a certificate without a key.
      const extra = await send("POST", "/api/v1/webhooks", {
        token,
        json: {
          url: receiverUrl(),
          events: [DELIVERED],
          client_certificate: { certificate: tls.alice.cert, private_key: tls.alice.key, pin: "x" },
        },
      });
      expectInvalid({ response: extra.response, error: extra.error }, [at("pin")]);
      const keyless = await send("POST", "/api/v1/webhooks", {
        token,
        json: {
          url: receiverUrl(),
          events: [DELIVERED],
          client_certificate: { certificate: tls.alice.cert },
        },
      });
      expectInvalid({ response: keyless.response, error: keyless.error }, [at("private_key")]);
      // Nothing was created by any of them.
      const listed = await unwrap(api.GET("/api/v1/webhooks", {}));
      expect(listed.data).toEqual([]);
    });

    it("with a background engine: delivers to a receiver requiring a certificate; without one, tls_error", async () => {
      const target = s.target();
      if (!target.deliversInBackground || !target.mtlsReceiver) return; // no engine in-process
      tls = await testClientTls();
      const rx = await target.mtlsReceiver(tls.caCert);
      const { api } = await newProject();
      const create = (url: string, client_certificate?: Input) =>
        unwrap(api.POST("/api/v1/webhooks", { body: { url, events: [DELIVERED], client_certificate } }));
      const withCert = await create(`${rx.origin}/with`, of(tls.alice.cert, tls.alice.key));
      const without = await create(`${rx.origin}/without`);
      await unwrap(api.POST("/api/v1/events", { body: publishBody(DELIVERED, messageData()) }));
      await rx.waitFor(1);
      const settled = async (id: string) => {
        const deadline = Date.now() + PATIENCE_MS;
        for (;;) {
          const [d] = (
            await unwrap(api.GET("/api/v1/webhooks/{id}/deliveries", { params: { path: { id } } }))
          ).data;
          if (d && d.status !== "pending") return d;
          if (Date.now() > deadline) throw new Error(`no attempt recorded for ${id}: ${JSON.stringify(d)}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      const [ok, refused] = await Promise.all([settled(withCert.id), settled(without.id)]);
      expect([ok.status, ok.error, ok.response_status]).toEqual(["succeeded", null, 200]);
      expect([refused.status, refused.error, refused.response_status]).toEqual(["failed", "tls_error", null]);
      expect(rx.requests.map((r) => [r.path, r.clientCertificate])).toEqual([["/with", "alice"]]);
    });
  });
}
