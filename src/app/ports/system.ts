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
