import { createHash, createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import type { CertificateReader, CertificateReading } from "../../app/ports/system.ts";
import type { ClientCertificateInput } from "../../domain/client-certificate.ts";
import { type CertificateFields, certificateFields } from "./certificate-der.ts";

const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
const ANY_EXTENDED_KEY_USAGE = "2.5.29.37.0";
const FIRST_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/**
 * The CertificateReader on node:crypto (X509Certificate to parse and to match the key, createPrivateKey),
 * which Node, Bun and Deno all provide, and Herald's own reading of the DER for the facts and the
 * extended key usage, which X509Certificate's getters give in different shapes by runtime (ADR 22).
 * Error messages name the field and what is wrong, never the runtime's text (it may quote input) nor
 * the key.
 */
export function createCertificateReader(): CertificateReader {
  return {
    read(input: ClientCertificateInput, path: string): CertificateReading {
      try {
        return readCertificate(input, path);
      } catch {
        // A runtime that throws where another answers (a key of another type than the certificate's,
        // an extension it cannot decode): still a 422, never a 500.
        return {
          ok: false,
          issues: [{ path: `${path}.certificate`, message: "could not be read with this private key" }],
        };
      }
    },
  };
}

function readCertificate(input: ClientCertificateInput, path: string): CertificateReading {
  const at = (field: string, message: string): CertificateReading => ({
    ok: false,
    issues: [{ path: `${path}.${field}`, message }],
  });
  let leaf: X509Certificate;
  let fields: CertificateFields;
  try {
    leaf = new X509Certificate(input.certificate.match(FIRST_CERTIFICATE)?.[0] ?? input.certificate);
    fields = certificateFields(leaf.raw);
  } catch {
    return at("certificate", "could not be read as an X.509 certificate");
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(
      input.passphrase === undefined
        ? { key: input.privateKey, format: "pem" }
        : { key: input.privateKey, format: "pem", passphrase: input.passphrase },
    );
  } catch {
    return input.passphrase === undefined
      ? at("private_key", "could not be read as a private key")
      : at("passphrase", "does not decrypt the private key");
  }
  if (!leaf.checkPrivateKey(key))
    return at("private_key", "does not belong to the certificate (the certificate's public key is another)");
  const usages = fields.extendedKeyUsage;
  // No extension means no restriction (RFC 5280 4.2.1.12): receivers accept it for client auth.
  if (usages !== null && !usages.includes(CLIENT_AUTH) && !usages.includes(ANY_EXTENDED_KEY_USAGE))
    return at(
      "certificate",
      "is not for client authentication (its extended key usage lacks clientAuth, so receivers refuse it)",
    );
  return {
    ok: true,
    facts: {
      subject: fields.subject,
      issuer: fields.issuer,
      notBefore: fields.notBefore,
      notAfter: fields.notAfter,
      fingerprint: fingerprint(leaf.raw),
    },
    privateKey: key.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

/** SHA-256 of the DER as lowercase hex pairs joined by colons (X509Certificate.fingerprint256's form). */
function fingerprint(der: Uint8Array): string {
  return (createHash("sha256").update(der).digest("hex").match(/../g) ?? []).join(":");
}
