// Ports to the machine: time, randomness, encryption at rest.
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
