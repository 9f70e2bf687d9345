/**
 * Gathers items for a short while and hands them to `flush` together: one database round trip for
 * many callers. Used only where losing a batch to a crash is harmless (the work is repeated elsewhere).
 */
export function createBatcher<T>(flush: (items: T[]) => Promise<void>, delayMs: number, maxItems = 500) {
  let items: T[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  let running: Promise<void> = Promise.resolve();

  const run = (): Promise<void> => {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    const batch = items;
    items = [];
    if (batch.length === 0) return running;
    running = running.then(() => flush(batch).catch(() => {}));
    return running;
  };

  return {
    add(item: T) {
      items.push(item);
      if (items.length >= maxItems) void run();
      else if (!timer) timer = setTimeout(() => void run(), delayMs);
    },
    /** Flushes what is waiting now (graceful stop, tests). */
    flush: run,
  };
}
