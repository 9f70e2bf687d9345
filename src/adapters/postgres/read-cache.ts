import type { Sql } from "postgres";

/**
 * The longest a cached token or endpoint list is served after it was read or after the last heartbeat
 * sent through the channel that came back, whichever is later, whatever happens to the notifications: the
 * bound on how long a change made through another process (a revoked token, a new or changed endpoint)
 * can go unseen here when the notification channel has failed (ADR 18, ADR 30).
 */
export const CACHE_TTL_MS = 1_000;
/**
 * An entry served when the last proof is older than this sends a heartbeat of its own, before it runs
 * out: the proof of life's checks (every 500 ms) carry one otherwise, and may take 300 ms to come back.
 */
const REBEAT_AFTER_MS = 800;
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
 * back), and never longer than `CACHE_TTL_MS` after the later of their read and the sending of the last
 * heartbeat heard back (commit order: every change committed before it was heard). Heartbeats ride in the
 * proof of life's checks (`nextBeat`) or go alone: entries in use are not read again every second. If
 * notifications stop (a connection lost, a partition), a change is seen after at most that long.
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
  /** Heartbeats sent and not heard back yet, with when each was sent. */
  private readonly beats = new Map<string, number>();
  /** When the newest heartbeat heard back was sent: every change committed before it was heard. */
  private provenAt = Number.NEGATIVE_INFINITY;
  private beating = false;
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
          this.provenAt = Number.NEGATIVE_INFINITY;
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
    let unanswered = false;
    for (const at of this.beats.values()) if (now - at >= HEARTBEAT_EVERY_MS) unanswered = true;
    if (unanswered || !this.live) {
      this.live = false;
      this.beats.clear();
      this.provenAt = Number.NEGATIVE_INFINITY;
      this.clear();
      await this.start();
    }
    await this.sendBeat();
  }

  /**
   * A heartbeat for a statement about to be sent on any connection to notify on CACHE_CHANNEL (the proof
   * of life's check carries it at no statement's cost), or null when nothing is cached (nothing to keep).
   * Heard back, it proves every change committed before it was heard (commit order): the
   * entries may then be served until CACHE_TTL_MS after it was sent. `beatLost` if the statement failed.
   */
  nextBeat(always = false): string | null {
    if (this.closed || !this.live) return null;
    if (!always && this.tables.endpoints.size === 0 && this.tables.tokens.size === 0) return null;
    const beat = `beat:${Math.random().toString(36).slice(2)}`;
    this.beats.set(beat, this.clock());
    return beat;
  }

  beatLost(beat: string): void {
    this.beats.delete(beat);
  }

  /** Sends a heartbeat of its own (the check, or an entry served whose proof runs out), one at a time. */
  private async sendBeat(): Promise<void> {
    if (this.beating) return;
    this.beating = true;
    const beat = this.nextBeat(true);
    try {
      if (beat !== null)
        await this.sql`SELECT pg_notify(${CACHE_CHANNEL}, ${beat})`.catch(() => this.beatLost(beat));
    } finally {
      this.beating = false;
    }
  }

  /** The cached value, or undefined when there is none that may be served. */
  get<T>(table: CachedTable, key: string): T | undefined {
    if (!this.live) return undefined;
    const entry = this.tables[table].get(key);
    if (entry === undefined) return undefined;
    const now = this.clock();
    if (now - Math.max(entry.at, this.provenAt) > CACHE_TTL_MS) {
      this.tables[table].delete(key);
      return undefined;
    }
    // Kept alive by heartbeats (the proof of life's, else its own) while it is used, not read again.
    if (now - this.provenAt > REBEAT_AFTER_MS && this.beats.size === 0) void this.sendBeat();
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
    else {
      const sentAt = this.beats.get(payload);
      if (sentAt === undefined) return;
      // Those sent before it are answered too: the channel works, whatever became of their statements.
      for (const [beat, at] of this.beats) if (at <= sentAt) this.beats.delete(beat);
      this.provenAt = Math.max(this.provenAt, sentAt);
      this.live = true;
    }
    // Another process's heartbeat: nothing to do.
  }
}
