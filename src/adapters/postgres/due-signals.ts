import type { Sql } from "postgres";
import type { DueSignals } from "../../app/ports/store.ts";

/** The LISTEN channel of due work; the payload is endpoint ids joined by commas. */
export const DUE_CHANNEL = "herald_due";
/** Most characters in one payload (PostgreSQL refuses 8,000 or more): larger announcements are split. */
const PAYLOAD_MAX = 7_000;
/** What an endpoint id can be (a UUID, or a test's name); anything else in a payload is left out. */
const ENDPOINT_ID = /^[A-Za-z0-9_.:-]{1,100}$/;

/**
 * Due work announced across processes through NOTIFY (ADR 18, "Due work across processes"). A publish
 * whose deliveries fall in shards another process holds announces their endpoints after its commit; every
 * process listens on the channel (through postgres.js's one listening connection, which it re-opens after
 * a loss) and reads the endpoints of its own shards, unless their lanes are full already. Without it the
 * owner found that work only at its next read: with three processes, a p50 of 29 ms from publish to
 * receipt at 50 events/s instead of 9.
 *
 * Announcements made while one is on its way go together in the next statement (a NOTIFY is a
 * transaction, with its commit's flush), so under load there is one statement per round trip, not one
 * per publish. Nothing is announced by a process that holds every shard, nor while the channel is not
 * known to work (a pooler in transaction mode drops LISTEN): the publisher then reads for that work
 * itself, and its reads find the other processes' work in its own shards, as before.
 */
export class PostgresDueSignals implements DueSignals {
  private readonly waiting = new Set<string>();
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

  announce(endpointIds: readonly string[]): void {
    for (const id of endpointIds) this.waiting.add(id);
    if (!this.sending) void this.send();
  }

  listen(heard: (endpointIds: readonly string[]) => void): () => void {
    let stopped = false;
    const listening = this.sql
      .listen(DUE_CHANNEL, (payload) => {
        if (stopped) return;
        const ids = parseEndpointIds(payload);
        if (ids.length > 0) heard(ids);
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
      while (this.waiting.size > 0) {
        const payloads = joinWithin([...this.waiting], PAYLOAD_MAX);
        this.waiting.clear();
        // Lost with the connection or the database: the owner's own reads find the work (at most 1 s).
        // Nothing here needs to outlive a crash: its commit does not wait for the disk.
        for (const payload of payloads) {
          await this.sql`
            SELECT set_config('synchronous_commit', 'off', true), pg_notify(${DUE_CHANNEL}, ${payload})`.catch(
            () => {},
          );
        }
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

/** The endpoint ids of a payload; what cannot be one is left out. */
export function parseEndpointIds(payload: string): string[] {
  return payload.split(",").filter((part) => ENDPOINT_ID.test(part));
}
