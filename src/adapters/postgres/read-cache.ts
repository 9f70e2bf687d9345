import type { Sql } from "postgres";

/**
 * The longest a cached token or endpoint list is served after it was read, whatever happens to the
 * notifications: the bound on how long a change made through another process (a revoked token, a new or
 * changed endpoint) can go unseen here when the notification channel has failed (ADR 18).
 */
export const CACHE_TTL_MS = 1_000;
/** The channel migration 0006's triggers announce changes on; the payload is the table's name. */
export const CACHE_CHANNEL = "herald_cache";
/** Entries kept per table at most; the map is emptied when full (a project rarely has more). */
const CACHE_LIMIT = 10_000;
/** How often `check` may send a heartbeat through the channel (it is called from the readiness ping). */
const HEARTBEAT_EVERY_MS = 2_000;

export type CachedTable = "endpoints" | "tokens";

interface Entry {
  value: unknown;
  at: number;
}

/**
 * What a publish reads before it writes, kept between publishes: the token of an API key (by its hash)
 * and the endpoints a project subscribes to an event type. Each publish otherwise spends two of its three
 * statements on these reads (issue 16 item 6).
 *
 * Correct across processes: migration 0006's triggers announce every change to `endpoints` and `tokens`
 * on LISTEN channel `herald_cache` at commit, and every process drops that table's entries when it hears
 * it (typically within a millisecond of the commit). This process's own writes drop them at once. A read
 * that began before a change and ends after it is not kept (a generation count). Entries are served only
 * while the channel is known to listen (its LISTEN answered, and the last heartbeat sent through it came
 * back), and never after `CACHE_TTL_MS`: if notifications stop (a connection lost, a partition), a change
 * is seen after at most that long.
 */
export class ReadCache {
  private readonly tables: Record<CachedTable, Map<string, Entry>> = {
    endpoints: new Map(),
    tokens: new Map(),
  };
  /** Reads on their way, by key: callers missing together share one. Emptied by every change heard. */
  private readonly inFlight: Record<CachedTable, Map<string, Promise<unknown>>> = {
    endpoints: new Map(),
    tokens: new Map(),
  };
  /** Bumped by every change heard: a read started under an older generation is not kept. */
  private generation = 0;
  /** A LISTEN is in place and no heartbeat went unanswered since. */
  private live = false;
  private unlisten: (() => Promise<void>) | null = null;
  /** The heartbeat sent and not heard back yet. */
  private beat: string | null = null;
  private lastBeatAt = Number.NEGATIVE_INFINITY;
  private closed = false;

  private readonly sql: Sql;
  private readonly clock: () => number;
  constructor(sql: Sql, clock: () => number = () => performance.now()) {
    this.sql = sql;
    this.clock = clock;
  }

  /**
   * Whether notifications are known to arrive now: the LISTEN answered and no heartbeat went unanswered
   * since. The due signals (due-signals.ts) share this connection, so this says whether they work too.
   */
  get listening(): boolean {
    return this.live;
  }

  /** Starts listening; entries are served once the LISTEN has answered. Never rejects. */
  async start(): Promise<void> {
    if (this.closed) return;
    const old = this.unlisten;
    this.unlisten = null;
    if (old) await old().catch(() => {});
    try {
      const { unlisten } = await this.sql.listen(
        CACHE_CHANNEL,
        (payload) => this.heard(payload),
        // Also called each time postgres.js re-listens after a lost connection: what was missed meanwhile is unknown.
        () => {
          this.clear();
          this.live = true;
        },
      );
      this.unlisten = unlisten;
    } catch {
      this.live = false;
    }
  }

  /**
   * Sends a heartbeat through the channel (at most every 2 s); if the previous one never came back, the
   * channel is dead or silent: stop serving entries and listen again. Called by the readiness ping.
   */
  async check(): Promise<void> {
    const now = this.clock();
    if (this.closed || now - this.lastBeatAt < HEARTBEAT_EVERY_MS) return;
    this.lastBeatAt = now;
    if (this.beat !== null || !this.live) {
      this.live = false;
      this.clear();
      await this.start();
    }
    const beat = `beat:${Math.random().toString(36).slice(2)}`;
    this.beat = beat;
    await this.sql`SELECT pg_notify(${CACHE_CHANNEL}, ${beat})`.catch(() => {});
  }

  /** The cached value, or undefined when there is none that may be served. */
  get<T>(table: CachedTable, key: string): T | undefined {
    if (!this.live) return undefined;
    const entry = this.tables[table].get(key);
    if (entry === undefined) return undefined;
    if (this.clock() - entry.at > CACHE_TTL_MS) {
      this.tables[table].delete(key);
      return undefined;
    }
    return entry.value as T;
  }

  /**
   * The cached value, else `read`'s answer, kept when `keepIt` says so. Callers that miss the same key
   * together share one read (when an entry expires under load, sixteen concurrent publishes made sixteen
   * reads of it); one that arrives after a change was heard starts a read of its own.
   */
  async through<T>(
    table: CachedTable,
    key: string,
    read: () => Promise<T>,
    keepIt: (value: T) => boolean = () => true,
  ): Promise<T> {
    const cached = this.get<T>(table, key);
    if (cached !== undefined) return cached;
    const flying = this.inFlight[table].get(key) as Promise<T> | undefined;
    if (flying) return flying;
    const readAt = this.generation;
    const reading = read().then((value) => {
      if (keepIt(value)) this.keep(table, key, readAt, value);
      return value;
    });
    const map = this.inFlight[table];
    map.set(key, reading);
    const forget = () => {
      if (map.get(key) === reading) map.delete(key);
    };
    reading.then(forget, forget);
    return reading;
  }

  /** The generation to pass to `keep` for a read about to start. */
  mark(): number {
    return this.generation;
  }

  /** Keeps what a read found, unless a change was heard since it began (`mark`). */
  keep(table: CachedTable, key: string, readAt: number, value: unknown): void {
    if (!this.live || readAt !== this.generation) return;
    const map = this.tables[table];
    if (map.size >= CACHE_LIMIT) map.clear();
    map.set(key, { value, at: this.clock() });
  }

  /** Drops a table's entries: this process changed it, or another one did. */
  changed(table: CachedTable): void {
    this.generation++;
    this.tables[table].clear();
    this.inFlight[table].clear();
  }

  /** Drops everything (for whoever writes around the repositories, as tests do). */
  clear(): void {
    this.generation++;
    this.tables.endpoints.clear();
    this.tables.tokens.clear();
    this.inFlight.endpoints.clear();
    this.inFlight.tokens.clear();
  }

  /** Stops serving and listening (the client's end() closes the listening connection). */
  close(): void {
    this.closed = true;
    this.live = false;
    this.clear();
  }

  private heard(payload: string): void {
    if (payload === "endpoints" || payload === "tokens") this.changed(payload);
    else if (payload === this.beat) {
      this.beat = null;
      this.live = true;
    }
    // Another process's heartbeat: nothing to do.
  }
}
