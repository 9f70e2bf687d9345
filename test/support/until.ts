import { PATIENCE_MS } from "./patience.ts";

export interface UntilOptions {
  /** How often `check` is asked (default 5 ms). */
  everyMs?: number;
  /** Failing after (default PATIENCE_MS); longer only for waits that grow with the work asked for. */
  timeoutMs?: number;
}

/**
 * Polls `check` until it holds. Fails after PATIENCE_MS, saying what did not happen: the bound is only
 * how long a broken run takes to fail, never a speed requirement (patience.ts), so a machine loaded by
 * other work waits longer instead of failing.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string | (() => string) = "the condition",
  { everyMs = 5, timeoutMs = PATIENCE_MS }: UntilOptions = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`not within ${timeoutMs} ms: ${typeof what === "string" ? what : what()}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
