import type { Clock, Ids } from "../app/ports.ts";

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() };

/** Web Crypto randomness. */
export const systemIds: Ids = {
  uuid: () => crypto.randomUUID(),
  randomBytes: (n) => crypto.getRandomValues(new Uint8Array(n)),
  random: () => Math.random(),
};
