import { randomUUID } from "node:crypto";
import type { Sql } from "postgres";
import type { DueSignals, HandedWork } from "../../app/ports/store.ts";
import { decodeHandedWork, encodeHandedWork, parseEndpointIds } from "./due-payload.ts";

export { parseEndpointIds } from "./due-payload.ts";

/** The LISTEN channel of due work; the payload is endpoint ids joined by commas, or a hand-over (due-payload.ts). */
export const DUE_CHANNEL = "herald_due";
/** What a publish statement asks of the due channel to carry its work itself (events.ts). */
export interface PublishCarrier {
  publishNotices(publishes: readonly HandedWork[]): { eventId: string; payload: string }[];
  carried(deliveryIds: readonly string[]): void;
}

/** Most characters in one payload (PostgreSQL refuses 8,000 or more): larger announcements are split. */
const PAYLOAD_MAX = 7_000;

/**
 * Due work announced across processes through NOTIFY (ADR 18, "Due work across processes"). A publish
 * whose deliveries fall in shards another process holds announces their endpoints after its commit; every
 * process listens on the channel (through postgres.js's one listening connection, which it re-opens after
 * a loss) and reads the endpoints of its own shards, unless their lanes are full already. Without it the
 * owner found that work only at its next read: with three processes, a p50 of 29 ms from publish to
 * receipt at 50 events/s instead of 9.
 *
 * An announcement given the publish's work carries it (event and first deliveries, when they fit in one
 * payload), so an owner that takes it queues that work without a due read or an events read: the two
 * statements per owner that otherwise follow every publish made through another process.
 *
 * Announcements made while one is on its way go together in the next statement (a NOTIFY is a
 * transaction, with its commit's flush), so under load there is one statement per round trip, not one
 * per publish. Nothing is announced by a process that holds every shard, nor while the channel is not
 * known to work (a pooler in transaction mode drops LISTEN): the publisher then reads for that work
 * itself, and its reads find the other processes' work in its own shards, as before.
 *
 * Since ADR 30 a publish sends its own notifications in its statement (`publishNotices`, `carried`: the
 * engine's `announce` after it then sends nothing for that work), and `barrier` sends a marker of this
 * instance through the channel: heard in commit order, it tells the engine that everything committed
 * before was heard.
 */
export class PostgresDueSignals implements DueSignals, PublishCarrier {
  private readonly waiting = new Set<string>();
  private readonly handed: string[] = [];
  private sending = false;
  /** Which endpoints a publish here carries to their owners (carry); null: none. */
  private theirs: ((webhookId: string) => boolean) | null = null;
  /** Deliveries a publish statement carried, until their `announce` (which then sends nothing for them). */
  private readonly carriedIds = new Set<string>();
  /** This instance's markers (barrier): `!token:n`, heard in commit order with every announcement. */
  private readonly token = randomUUID();
  private marked = 0;
  private heardMark = 0;
  private readonly barriers: { n: number; resolve: () => void }[] = [];
  private remark: ReturnType<typeof setTimeout> | null = null;

  /** `channel` checks the listening connection this shares (the read cache's heartbeat, ADR 18). */
  private readonly sql: Sql;
  private readonly channel: { readonly listening: boolean };
  constructor(sql: Sql, channel: { readonly listening: boolean }) {
    this.sql = sql;
    this.channel = channel;
  }

  get live(): boolean {
    return this.channel.listening;
  }

  carry(theirs: ((webhookId: string) => boolean) | null): void {
    this.theirs = theirs;
  }

  /**
   * The notifications a publish statement sends itself, per event: the first deliveries of endpoints
   * `carry` says are another process's, as one hand-over (or, too large for one, their endpoints).
   * None while the channel is not known to work.
   */
  publishNotices(publishes: readonly HandedWork[]): { eventId: string; payload: string }[] {
    const theirs = this.theirs;
    if (theirs === null || !this.live) return [];
    const out: { eventId: string; payload: string }[] = [];
    for (const p of publishes) {
      const deliveries = p.deliveries.filter((d) => theirs(d.webhookId));
      if (deliveries.length === 0) continue;
      const payload = encodeHandedWork({ event: p.event, deliveries }, PAYLOAD_MAX);
      const ids =
        payload === null ? joinWithin([...new Set(deliveries.map((d) => d.webhookId))], PAYLOAD_MAX) : [];
      for (const x of payload === null ? ids : [payload]) out.push({ eventId: p.event.id, payload: x });
    }
    return out;
  }

  /** The publish statement that sent publishNotices committed: these deliveries need no announcement. */
  carried(deliveryIds: readonly string[]): void {
    // Bounded: an announcement that never comes (a stopped engine) must not keep its ids forever.
    if (this.carriedIds.size > 100_000) this.carriedIds.clear();
    for (const id of deliveryIds) this.carriedIds.add(id);
  }

  barrier(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.barriers.push({ n: ++this.marked, resolve });
      this.mark();
    });
  }

  /** Sends the newest marker (in the next statement, so after every call so far); again if unheard in 2 s. */
  private mark(): void {
    if (this.remark) clearTimeout(this.remark);
    this.handed.push(`!${this.token}:${this.marked}`);
    if (!this.sending) void this.send();
    this.remark = setTimeout(() => {
      this.remark = null;
      if (this.barriers.length > 0) this.mark();
    }, 2_000);
    this.remark.unref?.();
  }

  /** A marker of this instance was heard: every barrier up to it is passed. */
  private heard(payload: string): void {
    const [token, n] = payload.slice(1).split(":");
    if (token !== this.token) return;
    const k = Number(n);
    if (!(k > this.heardMark)) return;
    this.heardMark = k;
    while (this.barriers.length > 0 && this.barriers[0]!.n <= k) this.barriers.shift()!.resolve();
    if (this.barriers.length === 0 && this.remark) {
      clearTimeout(this.remark);
      this.remark = null;
    }
  }

  announce(endpointIds: readonly string[], work?: HandedWork): void {
    if (work?.deliveries.some((d) => this.carriedIds.has(d.id))) {
      // What the publish statement carried already is not announced again.
      const rest = work.deliveries.filter((d) => !this.carriedIds.delete(d.id));
      const restIds = new Set(rest.map((d) => d.webhookId));
      const carriedOnly = new Set(work.deliveries.map((d) => d.webhookId).filter((id) => !restIds.has(id)));
      endpointIds = endpointIds.filter((id) => !carriedOnly.has(id));
      work = rest.length > 0 ? { event: work.event, deliveries: rest } : undefined;
      if (endpointIds.length === 0 && !work) return;
    }
    const payload = work ? encodeHandedWork(work, PAYLOAD_MAX) : null;
    // The work's endpoints ride with it; any other endpoint given is announced alone.
    const carried = new Set(payload === null ? [] : work!.deliveries.map((d) => d.webhookId));
    if (payload !== null) this.handed.push(payload);
    for (const id of endpointIds) if (!carried.has(id)) this.waiting.add(id);
    if (!this.sending) void this.send();
  }

  listen(
    heard: (endpointIds: readonly string[], work: HandedWork | null) => void,
    relistened?: () => void,
  ): () => void {
    let stopped = false;
    const listening = this.sql
      .listen(
        DUE_CHANNEL,
        (payload) => {
          if (payload.startsWith("!")) this.heard(payload);
          if (stopped || payload.startsWith("!")) return;
          const work = decodeHandedWork(payload);
          const ids = work
            ? [...new Set(work.deliveries.map((d) => d.webhookId))]
            : payload.startsWith("{")
              ? []
              : parseEndpointIds(payload);
          if (ids.length > 0) heard(ids, work);
        },
        // postgres.js calls this once LISTEN is in place, and again each time it re-listens on a new
        // connection after a lost one: what was notified in between is gone.
        () => {
          if (!stopped) relistened?.();
        },
      )
      .catch(() => null);
    return () => {
      stopped = true;
      void listening.then((l) => l?.unlisten()).catch(() => {});
    };
  }

  private async send(): Promise<void> {
    this.sending = true;
    try {
      while (this.waiting.size > 0 || this.handed.length > 0) {
        const payloads = [...this.handed.splice(0), ...joinWithin([...this.waiting], PAYLOAD_MAX)];
        this.waiting.clear();
        // Lost with the connection or the database: the owner's own reads find the work (at most 5 s, ADR 30).
        // Nothing here needs to outlive a crash: its commit does not wait for the disk. Every payload
        // waiting goes in this one statement (each its own notification), as one JSON text: an array
        // parameter would need the connection's array types, not known yet on a client's first statement.
        await this.sql`
          SELECT set_config('synchronous_commit', 'off', true), pg_notify(${DUE_CHANNEL}, p)
          FROM json_array_elements_text(${JSON.stringify(payloads)}::text::json) AS p`.catch(() => {});
      }
    } finally {
      this.sending = false;
    }
  }
}

/** `ids` joined by commas into as few strings as keep each within `max` characters. */
function joinWithin(ids: readonly string[], max: number): string[] {
  const out: string[] = [];
  let current = "";
  for (const id of ids) {
    if (current !== "" && current.length + 1 + id.length > max) {
      out.push(current);
      current = "";
    }
    current = current === "" ? id : `${current},${id}`;
  }
  if (current !== "") out.push(current);
  return out;
}
