// Ports to the machine: time, randomness, encryption at rest, certificates.
import type { ClientCertificateFacts, ClientCertificateInput } from "../../domain/client-certificate.ts";
import type { ValidationIssue } from "../../domain/errors.ts";

/** Time, as a port, so retry timing is tested without sleeping. */
export interface Clock {
  now(): Date;
}

/** Randomness and identifiers, as a port. */
export interface Ids {
  uuid(): string;
  randomBytes(n: number): Uint8Array;
  /** A uniform number in [0, 1), for jitter. */
  random(): number;
}

/** Encrypts endpoint secrets at rest (AES-256-GCM in production). */
export interface SecretCipher {
  seal(plain: string): Promise<string>;
  open(sealed: string): Promise<string>;
}

/**
 * Keyed hashes of personal subjects (ADR 15): an event stores the key of its recipient, never a plain
 * copy, so erasure finds a recipient's events by index. Keyed per project: the same address gives
 * unrelated keys in two projects.
 */
export interface SubjectKeys {
  /** The key of a recipient already normalised (normalizeRecipient). */
  recipientKey(scope: { tenantId: string; projectId: string }, recipient: string): Promise<string>;
}

/** A client certificate read and checked: its public facts, and its private key unencrypted (PKCS #8 PEM). */
export type CertificateReading =
  | { ok: true; facts: ClientCertificateFacts; privateKey: string }
  | { ok: false; issues: ValidationIssue[] };

/**
 * Reads PEM client certificates and private keys (ADR 22): parses the leaf, decrypts an encrypted key
 * with its passphrase, and checks that the key belongs to the certificate. Shape rules (PEM blocks,
 * sizes, a missing passphrase) are the domain's and are checked first.
 */
export interface CertificateReader {
  read(input: ClientCertificateInput, path: string): CertificateReading;
}
