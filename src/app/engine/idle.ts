/**
 * Waiting for idleness: those who wait (tests, a stop that flushes) are told once `isIdle` holds. Each
 * change that may make the engine idle calls `check`.
 */
export function idleWaiting(isIdle: () => boolean) {
  const waiters: (() => void)[] = [];
  return {
    check(): void {
      if (isIdle()) for (const w of waiters.splice(0)) w();
    },
    /** Resolves at once when idle, otherwise at the first `check` that finds it so. */
    wait(): Promise<void> {
      if (isIdle()) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}
