import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import type { CertificateReader, CertificateReading } from "../../app/ports/system.ts";
import type { ClientCertificateInput } from "../../domain/client-certificate.ts";

const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
const ANY_EXTENDED_KEY_USAGE = "2.5.29.37.0";
const FIRST_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/**
 * The CertificateReader on node:crypto (X509Certificate, createPrivateKey), which Node, Bun and Deno
 * all provide. Error messages name the field and what is wrong, never the runtime's text (it may quote
 * input) nor the key.
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
  try {
    leaf = new X509Certificate(input.certificate.match(FIRST_CERTIFICATE)?.[0] ?? input.certificate);
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
  const usages = leaf.keyUsage as string[] | undefined;
  if (Array.isArray(usages) && !usages.includes(CLIENT_AUTH) && !usages.includes(ANY_EXTENDED_KEY_USAGE))
    return at(
      "certificate",
      "is not for client authentication (its extended key usage lacks clientAuth, so receivers refuse it)",
    );
  const notBefore = new Date(leaf.validFrom);
  const notAfter = new Date(leaf.validTo);
  if (Number.isNaN(notBefore.getTime()) || Number.isNaN(notAfter.getTime()))
    return at("certificate", "has a validity period that could not be read");
  return {
    ok: true,
    facts: {
      subject: leaf.subject.replaceAll("\n", ", "),
      issuer: leaf.issuer.replaceAll("\n", ", "),
      notBefore,
      notAfter,
      fingerprint: leaf.fingerprint256.toLowerCase(),
    },
    privateKey: key.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}
