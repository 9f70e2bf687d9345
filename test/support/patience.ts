/**
 * How long a test waits for something that must happen (a delivery arriving, a process answering, a
 * line printed) before it calls it missing. Never a speed requirement: a wait ends as soon as the thing
 * happens, so this only bounds how long a broken run takes to fail. Generous on purpose, so a machine
 * loaded by other work never turns slowness into a failure; HERALD_TEST_PATIENCE_MS overrides it.
 * How fast things happen is measured by `npm run bench`, not asserted by tests.
 */
export const PATIENCE_MS = Number(process.env.HERALD_TEST_PATIENCE_MS ?? 0) || 120_000;
