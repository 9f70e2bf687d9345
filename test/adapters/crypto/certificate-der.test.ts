import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { certificateFields } from "../../../src/adapters/crypto/certificate-der.ts";
import { certificateCases } from "./certificate-cases.ts";

// The fields Herald reads from a certificate's DER are what Node's X509Certificate gives (the form
// Herald has always shown and stored): subject and issuer as Node prints them, RDNs joined by ", ";
// the validity; on Node `keyUsage` is the extended key usage. The same code on Bun and Deno:
// client-certificates-runtimes.test.ts.
describe("certificateFields", () => {
  it("reads every case's names, validity and extended key usage as Node's X509Certificate does", async () => {
    const { certificates } = await certificateCases();
    for (const [name, pem] of Object.entries(certificates)) {
      const x509 = new X509Certificate(pem);
      expect({ name, ...certificateFields(x509.raw) }).toEqual({
        name,
        subject: x509.subject.replaceAll("\n", ", "),
        issuer: x509.issuer.replaceAll("\n", ", "),
        notBefore: new Date(x509.validFrom),
        notAfter: new Date(x509.validTo),
        extendedKeyUsage: x509.keyUsage ?? null,
      });
    }
  });

  it("prints escapes, string types and attribute names like Node, and times past 2049", async () => {
    const { certificates } = await certificateCases();
    const of = (name: string) => certificateFields(new X509Certificate(certificates[name] as string).raw);
    expect(of("escaped").subject).toBe(
      'serialNumber=1 + CN=Zoë, O=A\\, B \\"Q\\" \\<x\\>\\; \\\\y=z, C=DE, emailAddress=x@y.z, OU=#, OU=\\ , OU=\\#in',
    );
    const names = of("names");
    // T61String (Ünï, "#lead "), BMPString (Жук), IA5String (DC); "street", not "streetAddress".
    expect(names.subject).toBe(
      "DC=org, DC=example, CN=Ünï, OU=a + OU=b, street=x, title=T, L=\\#lead\\ , ST=\\ sp, GN=Жук, businessCategory=c",
    );
    expect(names.notAfter.getUTCFullYear()).toBeGreaterThan(2100);
    expect(of("issue").extendedKeyUsage).toEqual(["1.3.6.1.5.5.7.3.2"]);
    expect(of("both").extendedKeyUsage).toEqual(["1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"]);
    expect(of("noEku").extendedKeyUsage).toBeNull();
    expect(of("v1").extendedKeyUsage).toBeNull();
  });

  it("throws on a certificate cut short or with bytes after it", async () => {
    const { certificates } = await certificateCases();
    const raw = new X509Certificate(certificates.issue as string).raw;
    for (const cut of [1, 10, raw.length / 2, raw.length - 1])
      expect(() => certificateFields(raw.subarray(0, Math.floor(cut)))).toThrow(/malformed DER/);
    expect(() => certificateFields(Buffer.concat([raw, Buffer.from([0])]))).toThrow(/malformed DER/);
  });
});
