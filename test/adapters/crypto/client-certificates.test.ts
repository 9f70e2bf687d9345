import { generateKeyPairSync, X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createCertificateReader } from "../../../src/adapters/crypto/client-certificates.ts";
import { ENCRYPTED_KEY_PASSPHRASE, testClientTls, testTls } from "../../support/tls.ts";
import { certificateCases } from "./certificate-cases.ts";

// The CertificateReader on node:crypto and the certificate's DER (the same cases on Bun and Deno:
// client-certificates-runtimes.test.ts; the API suite in test/e2e/runtimes.test.ts registers
// certificates on a real process of each).
const reader = createCertificateReader();

describe("createCertificateReader", () => {
  it("reads a certificate and its key: facts, and the key as unencrypted PKCS #8", async () => {
    const tls = await testClientTls();
    const read = reader.read({ certificate: tls.alice.cert, privateKey: tls.alice.key }, "cc");
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.facts.subject).toBe("CN=alice");
    expect(read.facts.issuer).toBe("CN=Herald Test Client CA clients");
    expect(read.facts.fingerprint).toMatch(/^([0-9a-f]{2}:){31}[0-9a-f]{2}$/);
    expect(read.facts.notAfter.getTime()).toBeGreaterThan(Date.now());
    expect(read.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    const enc = reader.read(
      {
        certificate: tls.alice.cert,
        privateKey: tls.aliceEncryptedKey,
        passphrase: ENCRYPTED_KEY_PASSPHRASE,
      },
      "cc",
    );
    expect(enc.ok && enc.privateKey).toBe(read.privateKey);
  });

  it("refuses a key of another certificate, also of another key type, naming the field", async () => {
    const tls = await testClientTls();
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({
      type: "pkcs8",
      format: "pem",
    }) as string;
    for (const privateKey of [tls.bob.key, rsa]) {
      expect(reader.read({ certificate: tls.alice.cert, privateKey }, "cc")).toEqual({
        ok: false,
        issues: [
          {
            path: "cc.private_key",
            message: "does not belong to the certificate (the certificate's public key is another)",
          },
        ],
      });
    }
  });

  it("refuses a certificate for servers only, and a wrong passphrase", async () => {
    const [server, clients] = await Promise.all([testTls(), testClientTls()]);
    const serverOnly = reader.read({ certificate: server.cert, privateKey: server.key }, "cc");
    expect(serverOnly.ok === false && serverOnly.issues[0]?.path).toBe("cc.certificate");
    expect(serverOnly.ok === false && serverOnly.issues[0]?.message).toContain("clientAuth");
    const wrong = reader.read(
      { certificate: clients.alice.cert, privateKey: clients.aliceEncryptedKey, passphrase: "nope" },
      "cc",
    );
    expect(wrong).toEqual({
      ok: false,
      issues: [{ path: "cc.passphrase", message: "does not decrypt the private key" }],
    });
  });

  it("accepts clientAuth and no extended key usage, refuses other usages, and every other case as expected", async () => {
    const { cases } = await certificateCases();
    for (const { name, expected, ...input } of cases) {
      const read = reader.read(input, "cc");
      expect([name, read.ok ? "accepted" : read.issues], name).toEqual([
        name,
        expected === "accepted" ? expected : [{ path: `cc.${expected.field}`, message: expected.message }],
      ]);
      // The facts are what Node's X509Certificate says (the form shown before they were read from the DER).
      if (!read.ok) continue;
      const x509 = new X509Certificate(input.certificate);
      expect(read.facts, name).toEqual({
        subject: x509.subject.replaceAll("\n", ", "),
        issuer: x509.issuer.replaceAll("\n", ", "),
        notBefore: new Date(x509.validFrom),
        notAfter: new Date(x509.validTo),
        fingerprint: x509.fingerprint256.toLowerCase(),
      });
    }
  });
});
