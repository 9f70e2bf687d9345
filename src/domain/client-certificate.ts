import type { ValidationIssue } from "./errors.ts";

// Mutual TLS: an endpoint may carry a client certificate (public, shown by its facts) and its private
// key (sealed at rest like a secret, never shown), presented when the receiver asks for one (ADR 22).

/** A certificate chain in PEM, in characters: a leaf and a few intermediates with RSA 4096 keys fit. */
export const MAX_CERTIFICATE_PEM_LENGTH = 16_384;
/** A private key in PEM, in characters: an RSA 8192 key, encrypted, fits. */
export const MAX_PRIVATE_KEY_PEM_LENGTH = 8_192;
export const MAX_PASSPHRASE_LENGTH = 1_024;

/** What the API and the console show of a client certificate: public facts only. */
export interface ClientCertificateFacts {
  /**
   * The leaf's subject and issuer distinguished names as Node prints them (RFC 2253 escaping), RDNs
   * joined by ", ", on every runtime (read from the DER, ADR 22).
   */
  subject: string;
  issuer: string;
  notBefore: Date;
  notAfter: Date;
  /** SHA-256 of the leaf's DER, lowercase hex pairs joined by colons. */
  fingerprint: string;
}

/** A client certificate as stored: the PEM chain in clear, the private key sealed. */
export interface StoredClientCertificate extends ClientCertificateFacts {
  /** The PEM certificate chain (leaf first), as it is presented. */
  certificate: string;
  /** The unencrypted PKCS #8 private key, sealed by the SecretCipher. */
  sealedKey: string;
}

/** A client certificate as given to the API: PEM texts, and the passphrase of an encrypted key. */
export interface ClientCertificateInput {
  certificate: string;
  privateKey: string;
  passphrase?: string | undefined;
}

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const KEY_BLOCK = /-----BEGIN ((?:RSA |EC |ENCRYPTED )?PRIVATE KEY)-----[\s\S]+?-----END \1-----/g;

/** The PEM certificate blocks of a text, in order; text around them (openssl's "Bag Attributes", "subject=") is not kept. */
export function certificateBlocks(text: string): string[] {
  return text.match(CERTIFICATE_BLOCK) ?? [];
}

/** The one PEM private key block of a text (an "EC PARAMETERS" block or attributes beside it are dropped); null unless exactly one. */
export function privateKeyBlock(text: string): string | null {
  const keys = text.match(KEY_BLOCK) ?? [];
  return keys.length === 1 ? (keys[0] ?? null) : null;
}

/** True for a PEM private key that needs a passphrase to be read (PKCS #8 or legacy OpenSSL encryption). */
export function isEncryptedKeyPem(pem: string): boolean {
  return /-----BEGIN ENCRYPTED PRIVATE KEY-----/.test(pem) || /Proc-Type:\s*4,\s*ENCRYPTED/.test(pem);
}

/**
 * Problems with the shape of a client certificate input, before any parsing: one or more PEM
 * certificates and no private key, exactly one PEM private key (text around the blocks, such as
 * openssl's attributes or an EC PARAMETERS block, is ignored and not kept), a passphrase only for an encrypted key
 * and never missing for one. Paths are under `path`; messages never quote the key or the passphrase.
 */
export function clientCertificateShapeIssues(
  input: ClientCertificateInput,
  path = "client_certificate",
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  // The certificate is stored and shown in clear: a key pasted with it must not be kept there.
  if (/PRIVATE KEY-----/.test(input.certificate)) {
    issues.push({
      path: `${path}.certificate`,
      message: "holds a private key: give the key as private_key, and only certificates here",
    });
  } else if (certificateBlocks(input.certificate).length === 0) {
    issues.push({
      path: `${path}.certificate`,
      message:
        "is not a PEM certificate (expected -----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----)",
    });
  }
  const keys = input.privateKey.match(KEY_BLOCK) ?? [];
  const encrypted = isEncryptedKeyPem(input.privateKey);
  if (keys.length !== 1) {
    issues.push({
      path: `${path}.private_key`,
      message:
        keys.length > 1
          ? "holds more than one private key"
          : "is not a PEM private key (expected -----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY, EC PRIVATE KEY or ENCRYPTED PRIVATE KEY)",
    });
  } else if (encrypted && !input.passphrase) {
    issues.push({
      path: `${path}.passphrase`,
      message: "is required: the private key is encrypted (Herald decrypts it once and seals it at rest)",
    });
  } else if (!encrypted && input.passphrase !== undefined) {
    issues.push({ path: `${path}.passphrase`, message: "is given but the private key is not encrypted" });
  }
  return issues;
}

/** Problems with a certificate's validity period at a moment: expired, or not valid yet. */
export function clientCertificateTimeIssues(
  facts: Pick<ClientCertificateFacts, "notBefore" | "notAfter">,
  now: Date,
  path = "client_certificate",
): ValidationIssue[] {
  if (facts.notAfter.getTime() <= now.getTime())
    return [{ path: `${path}.certificate`, message: `expired on ${facts.notAfter.toISOString()}` }];
  if (facts.notBefore.getTime() > now.getTime())
    return [{ path: `${path}.certificate`, message: `is not valid before ${facts.notBefore.toISOString()}` }];
  return [];
}
