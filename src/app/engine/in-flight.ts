/**
 * Deliveries in flight: counted against HERALD_CONCURRENCY in all and the endpoint's concurrency each,
 * from the claim that takes them until their send ends (or they are parked for their turn, postponed or
 * let go unsent). Counted per endpoint, the room rule reads it as a map (claim.ts, `roomRule`).
 */
export function inFlightCounts() {
  const perEndpoint = new Map<string, number>();
  let total = 0;
  let waiters: (() => void)[] = [];

  return {
    get total(): number {
      return total;
    },
    /** In flight per endpoint, for the room rule; read-only to everyone else. */
    perEndpoint: perEndpoint as ReadonlyMap<string, number>,
    add(webhookId: string): void {
      total++;
      perEndpoint.set(webhookId, (perEndpoint.get(webhookId) ?? 0) + 1);
    },
    remove(webhookId: string): void {
      const n = (perEndpoint.get(webhookId) ?? 0) - 1;
      if (n <= 0) perEndpoint.delete(webhookId);
      else perEndpoint.set(webhookId, n);
      total--;
      if (total === 0) for (const w of waiters.splice(0)) w();
    },
    /** Resolves once nothing is in flight, or after `ms` (whichever is first). */
    none(ms: number): Promise<void> {
      if (total === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiters = waiters.filter((w) => w !== done);
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, ms));
        waiters.push(done);
      });
    },
  };
}

export type InFlight = ReturnType<typeof inFlightCounts>;
