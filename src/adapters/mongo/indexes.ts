import { type Db, type IndexDescription, MongoServerError } from "mongodb";
import { COLLECTIONS } from "./collections.ts";

type IndexSpec = IndexDescription & { name: string };

// Every list query and the claim query has an index whose prefix is its equality fields and whose
// remainder is its range and sort. No partial or TTL indexes: FerretDB v1 rejects both.
export const INDEXES: Record<string, readonly IndexSpec[]> = {
  [COLLECTIONS.endpoints]: [
    { name: "scope_created", key: { tenant_id: 1, project_id: 1, created_at: -1, _id: -1 } },
    { name: "project_events", key: { project_id: 1, events: 1 } },
    { name: "enabled_failing_since", key: { enabled: 1, failing_since: 1 } },
    // Disabled endpoints whose endpoint.disabled event is owed (ADR 20).
    { name: "enabled_disabled_at", key: { enabled: 1, disabled_at: 1 } },
  ],
  [COLLECTIONS.events]: [
    { name: "scope_created", key: { tenant_id: 1, project_id: 1, created_at: 1, _id: 1 } },
    { name: "fanout_pending_created", key: { fanout_pending: 1, created_at: 1, _id: 1 } },
    { name: "created", key: { created_at: 1 } },
    // Erasure (ADR 15): a subject's events by index, never by scanning their bodies. Single fields, as
    // the scope is filtered after the lookup; `resource_id: null` also finds events awaiting the backfill.
    { name: "resource", key: { resource_id: 1 } },
    { name: "recipient", key: { recipient_key: 1 } },
  ],
  // Every index here is rewritten by each delivery's two hot writes (on PostgreSQL-backed servers an
  // update rewrites every index entry of the document), so each one must earn its cost: ADR 9.
  [COLLECTIONS.deliveries]: [
    // The API's list of an endpoint's deliveries, newest first; also cancelPending (by scope and endpoint).
    {
      name: "scope_webhook_created",
      key: { tenant_id: 1, project_id: 1, webhook_id: 1, created_at: -1, _id: -1 },
    },
    // The claim: pending and due, earliest first, the shard read from the index; and dueStats.
    { name: "due", key: { status: 1, scheduled_at: 1, shard: 1 } },
    // The head of an endpoint with ordering "fifo" (ADR 16): its pending records in acceptance order.
    { name: "webhook_pending", key: { webhook_id: 1, status: 1, sequence: 1, event_id: 1 } },
    // A manual retry's and the recovery tool's "latest attempt of this event to this endpoint".
    { name: "event_webhook_attempt", key: { event_id: 1, webhook_id: 1, attempt: -1 } },
    // Retention.
    { name: "created", key: { created_at: 1 } },
  ],
  // Shard leases (a few hundred documents) and process heartbeats are read whole; _id serves the writes.
  [COLLECTIONS.shardLeases]: [],
  [COLLECTIONS.processes]: [],
  [COLLECTIONS.tokens]: [
    { name: "hash", key: { hash: 1 }, unique: true },
    { name: "created", key: { created_at: -1, _id: -1 } },
  ],
  // Idempotency records are found by _id (the scope key), and by event when an erasure removes them.
  [COLLECTIONS.idempotency]: [{ name: "event", key: { event_id: 1 } }],
  // Rare writes: a project's erasures newest first (the list, and a project's own retention).
  [COLLECTIONS.erasures]: [
    { name: "scope_created", key: { tenant_id: 1, project_id: 1, created_at: -1, _id: -1 } },
  ],
  // One small document per project that changed a setting, read by _id or whole (retention).
  [COLLECTIONS.projectSettings]: [],
};

/**
 * What earlier versions created and no query uses any more: dropped at start-up (ADR 9). The per-delivery
 * lease engine's `delivery_leases` collection, and its `webhook_status` index on deliveries. (Its `due`
 * index had another key; `ensureIndexes` replaces an index whose key changed under the same name.)
 */
export const OBSOLETE = {
  collections: ["delivery_leases"],
  indexes: { [COLLECTIONS.deliveries]: ["webhook_status"] } as Record<string, readonly string[]>,
};

const NAMESPACE_NOT_FOUND = 26;
const INDEX_NOT_FOUND = 27;

async function existingIndexes(db: Db, collection: string): Promise<Map<string, string>> {
  try {
    const found = await db.collection(collection).listIndexes().toArray();
    return new Map(found.map((i) => [String(i.name), JSON.stringify(i.key)]));
  } catch (e) {
    if (e instanceof MongoServerError && e.code === NAMESPACE_NOT_FOUND) return new Map();
    throw e;
  }
}

/** Drops an index; one that is gone already (another process dropped it first) is no error. */
async function dropIndex(db: Db, collection: string, name: string): Promise<void> {
  try {
    await db.collection(collection).dropIndex(name);
  } catch (e) {
    if (!(e instanceof MongoServerError && (e.code === INDEX_NOT_FOUND || e.code === NAMESPACE_NOT_FOUND)))
      throw e;
  }
}

/**
 * Creates the indexes Herald's queries need, replaces one whose key changed under the same name, and
 * drops what earlier versions left (OBSOLETE); safe to run at every start and from several processes.
 * Missing indexes are created one per command: FerretDB v1 drops the connection when one createIndexes
 * command names several indexes that exist already (which two processes starting together can cause).
 */
export async function ensureIndexes(db: Db): Promise<void> {
  await Promise.all(
    Object.entries(INDEXES).map(async ([collection, specs]) => {
      const existing = await existingIndexes(db, collection);
      for (const name of OBSOLETE.indexes[collection] ?? []) {
        if (existing.has(name)) await dropIndex(db, collection, name);
      }
      for (const spec of specs) {
        const key = existing.get(spec.name);
        if (key === JSON.stringify(spec.key)) continue;
        if (key !== undefined) await dropIndex(db, collection, spec.name);
        await db.collection(collection).createIndexes([spec]);
      }
    }),
  );
  const present = new Set((await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
  for (const name of OBSOLETE.collections) {
    if (present.has(name)) await db.dropCollection(name).catch(() => {});
  }
}
