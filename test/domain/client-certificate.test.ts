import { describe, expect, it } from "vitest";
import {
  clientCertificateShapeIssues,
  clientCertificateTimeIssues,
  isEncryptedKeyPem,
} from "../../src/domain/client-certificate.ts";

const CERT = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const KEY = "-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n";
const ENC = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIGH\n-----END ENCRYPTED PRIVATE KEY-----\n";
const LEGACY =
  "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,00\n\nMIGH\n-----END RSA PRIVATE KEY-----\n";

describe("client certificate rules", () => {
  it("accepts a chain and one key; a passphrase only for an encrypted key", () => {
    expect(clientCertificateShapeIssues({ certificate: CERT + CERT, privateKey: KEY })).toEqual([]);
    expect(clientCertificateShapeIssues({ certificate: CERT, privateKey: ENC, passphrase: "p" })).toEqual([]);
    expect(isEncryptedKeyPem(LEGACY)).toBe(true);
    expect(isEncryptedKeyPem(KEY)).toBe(false);
  });

  it("names the field of each problem, never quoting the key", () => {
    const paths = (certificate: string, privateKey: string, passphrase?: string) =>
      clientCertificateShapeIssues({ certificate, privateKey, passphrase }).map((i) => i.path);
    expect(paths("x", KEY)).toEqual(["client_certificate.certificate"]);
    expect(paths(CERT + KEY, KEY)).toEqual(["client_certificate.certificate"]);
    // openssl's attribute lines and an EC PARAMETERS block around the PEM blocks are ignored.
    expect(
      paths(
        `subject=CN = a\n${CERT}`,
        `-----BEGIN EC PARAMETERS-----\nBggq\n-----END EC PARAMETERS-----\n${KEY}`,
      ),
    ).toEqual([]);
    expect(paths(CERT, "x")).toEqual(["client_certificate.private_key"]);
    expect(paths(CERT, KEY + KEY)).toEqual(["client_certificate.private_key"]);
    expect(paths(CERT, ENC)).toEqual(["client_certificate.passphrase"]);
    expect(paths(CERT, LEGACY)).toEqual(["client_certificate.passphrase"]);
    expect(paths(CERT, KEY, "p")).toEqual(["client_certificate.passphrase"]);
    const all = JSON.stringify(clientCertificateShapeIssues({ certificate: "x", privateKey: `${KEY}tail` }));
    expect(all).not.toContain("MIGH");
  });

  it("refuses an expired or not yet valid certificate", () => {
    const now = new Date("2026-06-01T00:00:00Z");
    const span = (from: string, to: string) => ({ notBefore: new Date(from), notAfter: new Date(to) });
    expect(clientCertificateTimeIssues(span("2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"), now)).toEqual(
      [],
    );
    expect(clientCertificateTimeIssues(span("2025-01-01T00:00:00Z", "2026-06-01T00:00:00Z"), now)).toEqual([
      { path: "client_certificate.certificate", message: "expired on 2026-06-01T00:00:00.000Z" },
    ]);
    expect(
      clientCertificateTimeIssues(span("2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z"), now)[0]?.message,
    ).toBe("is not valid before 2026-07-01T00:00:00.000Z");
  });
});
