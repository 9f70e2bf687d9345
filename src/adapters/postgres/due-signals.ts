import type { Sql } from "postgres";
import type { DueSignals, HandedWork } from "../../app/ports/store.ts";
import { decodeHandedWork, encodeHandedWork, parseEndpointIds } from "./due-payload.ts";

export { parseEndpointIds } from "./due-payload.ts";

/** The LISTEN channel of due work; the payload is endpoint ids joined by commas, or a hand-over (due-payload.ts). */
export const DUE_CHANNEL = "herald_due";
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
 */
export class PostgresDueSignals implements DueSignals {
  private readonly waiting = new Set<string>();
  private readonly handed: string[] = [];
  private sending = false;

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

  announce(endpointIds: readonly string[], work?: HandedWork): void {
    const payload = work ? encodeHandedWork(work, PAYLOAD_MAX) : null;
    // The work's endpoints ride with it; any other endpoint given is announced alone.
    const carried = new Set(payload === null ? [] : work!.deliveries.map((d) => d.webhookId));
    if (payload !== null) this.handed.push(payload);
    for (const id of endpointIds) if (!carried.has(id)) this.waiting.add(id);
    if (!this.sending) void this.send();
  }

  listen(heard: (endpointIds: readonly string[], work: HandedWork | null) => void): () => void {
    let stopped = false;
    const listening = this.sql
      .listen(DUE_CHANNEL, (payload) => {
        if (stopped) return;
        const work = decodeHandedWork(payload);
        const ids = work
          ? [...new Set(work.deliveries.map((d) => d.webhookId))]
          : payload.startsWith("{")
            ? []
            : parseEndpointIds(payload);
        if (ids.length > 0) heard(ids, work);
      })
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
        // Lost with the connection or the database: the owner's own reads find the work (at most 1 s).
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
