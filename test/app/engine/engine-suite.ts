import { afterEach } from "vitest";
import { engineHarness } from "../../support/engine-harness.ts";

/**
 * The set-up the engine-*.test.ts files share: a harness per test, its dispatcher stopped after the test.
 * Importing this registers the stop in the importing file (as each file's own afterEach would).
 */
export type Harness = Awaited<ReturnType<typeof engineHarness>>;
let h: Harness | null = null;
afterEach(async () => {
  await h?.dispatcher.stop(1_000);
  h = null;
});

export async function setup(...args: Parameters<typeof engineHarness>) {
  h = await engineHarness(...args);
  h.dispatcher.start();
  return h;
}

/** A harness the test made itself (its dispatcher started later, by the test): stopped after it the same way. */
export function own(t: Harness) {
  h = t;
}
