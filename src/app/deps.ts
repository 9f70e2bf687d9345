import type { Clock, DispatchSignal, Ids, Repositories, SecretCipher } from "./ports.ts";

/** What the use cases need, built once in the entry point. */
export interface AppDeps {
  repos: Repositories;
  clock: Clock;
  ids: Ids;
  cipher: SecretCipher;
  signal: DispatchSignal;
  policy: {
    allowHttpUrls: boolean;
  };
}
