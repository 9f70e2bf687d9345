import type { DispatchSignal } from "./ports/sending.ts";
import type { Repositories } from "./ports/store.ts";
import type { CertificateReader, Clock, Ids, SecretCipher, SubjectKeys } from "./ports/system.ts";
import type { Tracing } from "./ports/tracing.ts";

/** What the use cases need, built once in the entry point. */
export interface AppDeps {
  repos: Repositories;
  clock: Clock;
  ids: Ids;
  cipher: SecretCipher;
  /** Keyed hashes of recipients, stored on events so erasure finds them by index (ADR 15). */
  subjects: SubjectKeys;
  /** Reads and checks endpoints' client certificates and keys (ADR 22). */
  certificates: CertificateReader;
  signal: DispatchSignal;
  /** Spans of each publish and its fan-out (ADR 24); null or absent when tracing is off. */
  tracing?: Tracing | null;
  policy: {
    allowHttpUrls: boolean;
    /** HERALD_ALLOW_PRIVATE_NETWORKS: endpoint URLs may name loopback, private, link-local... IP literals. */
    allowPrivateNetworks: boolean;
  };
}
