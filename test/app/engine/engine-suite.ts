import { afterEach } from "vitest";
import { engineHarness } from "../../support/engine-harness.ts";

/**
 * The set-up the files that run the engine harness share (here and in test/app): the harnesses a test
 * made, their dispatchers stopped after it (a stop is safe on a dispatcher never started or stopped
 * already). Importing this registers the stop in the importing file, before the file's own hooks: its
 * own afterEach runs first (vitest runs after-hooks last registered first), so it can release what a
 * stop would wait on.
 */
export type Harness = Awaited<ReturnType<typeof engineHarness>>;
const harnesses: Harness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.dispatcher.stop(1_000)));
});

/** A harness whose dispatcher the test starts itself, when it is ready: stopped after the test. */
export async function harness(...args: Parameters<typeof engineHarness>): Promise<Harness> {
  const h = await engineHarness(...args);
  harnesses.push(h);
  return h;
}

/** A harness with its dispatcher started: stopped after the test. */
export async function setup(...args: Parameters<typeof engineHarness>): Promise<Harness> {
  const h = await harness(...args);
  h.dispatcher.start();
  return h;
}
