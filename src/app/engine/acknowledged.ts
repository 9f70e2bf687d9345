/**
 * The event/endpoint pairs a manual success acknowledged (ADR 19), as the recorder saw them: such a pair
 * gets no further automatic attempt and is never reported as given up. Only manual successes enter, and
 * the oldest go past `kept` (far more than can be in flight at once).
 */
export class AcknowledgedPairs {
  readonly #kept: number;
  /** Oldest first (a Set keeps insertion order). */
  readonly #pairs = new Set<string>();

  constructor(kept = 10_000) {
    this.#kept = kept;
  }

  add(eventId: string, webhookId: string): void {
    this.#pairs.add(`${eventId}/${webhookId}`);
    if (this.#pairs.size > this.#kept) {
      for (const oldest of this.#pairs) {
        this.#pairs.delete(oldest);
        break;
      }
    }
  }

  has(eventId: string, webhookId: string): boolean {
    return this.#pairs.has(`${eventId}/${webhookId}`);
  }
}
