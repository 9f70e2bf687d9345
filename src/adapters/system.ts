import type { Clock, Ids } from "../app/ports/system.ts";

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() };

// Random bytes are drawn from Web Crypto a few kilobytes at a time and handed out in slices, as
// crypto.randomUUID does: one system call per event id costs more than the rest of making the id.
const POOL_SIZE = 4096;
let pool = new Uint8Array(0);
let used = 0;

function randomBytes(n: number): Uint8Array {
  if (n > POOL_SIZE) return crypto.getRandomValues(new Uint8Array(n));
  if (used + n > pool.length) {
    pool = crypto.getRandomValues(new Uint8Array(POOL_SIZE));
    used = 0;
  }
  // A copy, so no two callers ever hold the same bytes; the pool forgets what it handed out (secrets
  // are made from these bytes).
  const out = pool.slice(used, used + n);
  pool.fill(0, used, used + n);
  used += n;
  return out;
}

/** Web Crypto randomness. */
export const systemIds: Ids = {
  uuid: () => crypto.randomUUID(),
  randomBytes,
  random: () => Math.random(),
};
