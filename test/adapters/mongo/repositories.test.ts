import { describe, expect, it } from "vitest";
import { COLLECTIONS } from "../../../src/adapters/mongo/collections.ts";
import { createMongoConsoleStore } from "../../../src/adapters/mongo/console.ts";
import { MongoDeliveries } from "../../../src/adapters/mongo/deliveries.ts";
import type { DeliveryDoc } from "../../../src/adapters/mongo/documents/deliveries.ts";
import { type EndpointDoc, endpointToDoc } from "../../../src/adapters/mongo/documents/endpoints.ts";
import type { EventDoc } from "../../../src/adapters/mongo/documents/events.ts";
import { connectMongo } from "../../../src/adapters/mongo/index.ts";
import { ensureIndexes, INDEXES } from "../../../src/adapters/mongo/indexes.ts";
import { StoreUnavailableError } from "../../../src/app/ports/store.ts";
import { shardOf } from "../../../src/domain/shards.ts";
import { consoleContract } from "../../app/ports/console-contract.ts";
import { aDelivery, anEndpoint, anEvent, at, ids, newScope } from "../../app/ports/fixtures.ts";
import { repositoryContract } from "../../app/ports/repository-contract.ts";
import { freshMongoRepositories } from "../../support/mongo.ts";

repositoryContract("mongo", () => freshMongoRepositories("herald_test_contract"));

consoleContract("mongo", async () => {
  const fresh = await freshMongoRepositories("herald_test_console");
  const store = await createMongoConsoleStore(fresh.db);
  return { repos: fresh.repos, ...store, cleanup: fresh.cleanup };
});

describe("mongo adapter", () => {
  it("reads an endpoint stored before filters existed (no filter field) as having none", async () => {
    const fresh = await freshMongoRepositories("herald_test_filter_upgrade");
    try {
      const scope = newScope();
      const e = anEndpoint(scope);
      const { filter: _none, ...old } = endpointToDoc(e);
      await fresh.db.collection<EndpointDoc>(COLLECTIONS.endpoints).insertOne(old);
      expect(await fresh.repos.endpoints.get(scope, e.id)).toEqual({ ...e, filter: null });
      const withFilter = await fresh.repos.endpoints.update(scope, e.id, {
        filter: { "data.status": { $in: ["bounced"] } },
        updatedAt: at(1),
      });
      expect(withFilter?.filter).toEqual({ "data.status": { $in: ["bounced"] } });
      const raw = await fresh.db.collection<EndpointDoc>(COLLECTIONS.endpoints).findOne({ _id: e.id });
      expect(raw?.filter).toBe('{"data.status":{"$in":["bounced"]}}');
    } finally {
      await fresh.cleanup();
    }
  });

  it("creates every index, and creating them again changes nothing", async () => {
    const fresh = await freshMongoRepositories("herald_test_indexes");
    try {
      const names = async () =>
        Object.fromEntries(
          await Promise.all(
            Object.keys(INDEXES).map(async (c) => {
              const found = await fresh.db
                .collection(c)
                .listIndexes()
                .toArray()
                .catch(() => []);
              return [
                c,
                found
                  .map((i) => String(i.name))
                  .filter((n) => n !== "_id_")
                  .sort(),
              ] as const;
            }),
          ),
        );
      const expected = Object.fromEntries(
        Object.entries(INDEXES).map(([c, specs]) => [c, specs.map((s) => s.name).sort()]),
      );
      expect(await names()).toEqual(expected);
      await ensureIndexes(fresh.db);
      await Promise.all([ensureIndexes(fresh.db), ensureIndexes(fresh.db)]);
      expect(await names()).toEqual(expected);
      await expect(fresh.repos.ping()).resolves.toBeUndefined();
    } finally {
      await fresh.cleanup();
    }
  });

  it("upgrades a database of the per-delivery lease engine: the changed index replaced, the obsolete ones dropped", async () => {
    const fresh = await freshMongoRepositories("herald_test_index_upgrade");
    try {
      const deliveries = fresh.db.collection(COLLECTIONS.deliveries);
      // What the previous engine created (ADR 7): another key under the name "due", an index by
      // endpoint and status, and the lease collection.
      await deliveries.dropIndex("due");
      await deliveries.createIndexes([
        { name: "due", key: { status: 1, scheduled_at: 1, lease_expires_at: 1 } },
        { name: "webhook_status", key: { webhook_id: 1, status: 1 } },
      ]);
      await fresh.db.collection("delivery_leases").insertOne({ _id: "l1" } as never);
      await ensureIndexes(fresh.db);
      const found = await deliveries.listIndexes().toArray();
      const byName = new Map(found.map((i) => [String(i.name), i.key]));
      expect(byName.get("due")).toEqual({ status: 1, scheduled_at: 1, shard: 1 });
      expect(byName.has("webhook_status")).toBe(false);
      const collections = (await fresh.db.listCollections({}, { nameOnly: true }).toArray()).map(
        (c) => c.name,
      );
      expect(collections).not.toContain("delivery_leases");
    } finally {
      await fresh.cleanup();
    }
  });

  it("reads an endpoint written before custom headers and signature schemes as having none and herald-v1", async () => {
    const fresh = await freshMongoRepositories("herald_test_old_endpoint");
    try {
      const scope = newScope();
      const e = anEndpoint(scope, {
        headers: [{ name: "X-A", sealed: "s" }],
        signatureScheme: "standard-webhooks",
      });
      await fresh.repos.endpoints.insert(e);
      const col = fresh.db.collection<EndpointDoc>(COLLECTIONS.endpoints);
      expect(await col.findOne({ _id: e.id })).toMatchObject({
        headers: [{ name: "X-A", sealed: "s" }],
        signature_scheme: "standard-webhooks",
      });
      await col.updateOne({ _id: e.id }, { $unset: { headers: "", signature_scheme: "" } });
      expect(await fresh.repos.endpoints.get(scope, e.id)).toEqual({
        ...e,
        headers: [],
        signatureScheme: "herald-v1",
      });
    } finally {
      await fresh.cleanup();
    }
  });

  it("reads an endpoint stored before rate limits existed as having none, and stores one as per_second or per_minute", async () => {
    const fresh = await freshMongoRepositories("herald_test_rate_limit");
    try {
      const scope = newScope();
      const old = anEndpoint(scope);
      const limited = anEndpoint(scope, { rateLimit: { count: 5, per: "second" } });
      await fresh.repos.endpoints.insert(old);
      await fresh.repos.endpoints.insert(limited);
      const col = fresh.db.collection<EndpointDoc>(COLLECTIONS.endpoints);
      await col.updateOne({ _id: old.id }, { $unset: { rate_limit: "" } });
      expect((await fresh.repos.endpoints.get(scope, old.id))?.rateLimit).toBeNull();
      expect((await col.findOne({ _id: limited.id }))?.rate_limit).toEqual({ per_second: 5 });
      await fresh.repos.endpoints.update(scope, limited.id, {
        rateLimit: { count: 300, per: "minute" },
        updatedAt: at(1),
      });
      expect((await col.findOne({ _id: limited.id }))?.rate_limit).toEqual({ per_minute: 300 });
    } finally {
      await fresh.cleanup();
    }
  });

  it("stores each delivery's shard, and gives pending records from before shards theirs at start-up", async () => {
    const fresh = await freshMongoRepositories("herald_test_shards");
    try {
      const scope = newScope();
      const d = aDelivery(scope, { scheduledAt: at(0) });
      const old = aDelivery(scope, { scheduledAt: at(1) });
      await fresh.repos.deliveries.insertMany([d, old]);
      const col = fresh.db.collection<DeliveryDoc>(COLLECTIONS.deliveries);
      expect((await col.findOne({ _id: d.id }))?.shard).toBe(shardOf(d.webhookId));
      // A record written by the previous version of Herald: no shard, so no owner would read it by shard.
      await col.updateOne({ _id: old.id }, { $unset: { shard: "" } });
      const byShard = () =>
        fresh.repos.deliveries.due({
          now: at(10),
          shards: [shardOf(old.webhookId)],
          limit: 10,
          excludeWebhookIds: [],
          excludeIds: [],
        });
      expect(ids(await byShard())).not.toContain(old.id);
      expect(await new MongoDeliveries(col).backfillShards()).toBe(1);
      expect(ids(await byShard())).toContain(old.id);
      expect(await new MongoDeliveries(col).backfillShards()).toBe(0);
    } finally {
      await fresh.cleanup();
    }
  });

  it("lists an event written before Herald kept subject fields (no such fields) for the backfill, until filled", async () => {
    const fresh = await freshMongoRepositories("herald_test_subjects");
    try {
      const scope = newScope();
      const old = anEvent(scope);
      await fresh.repos.events.insert(old);
      const col = fresh.db.collection<EventDoc>(COLLECTIONS.events);
      // As the previous version wrote it: neither field at all.
      await col.updateOne({ _id: old.id }, { $unset: { resource_id: "", recipient_key: "" } });
      expect(await fresh.repos.events.get(scope, old.id)).toEqual({
        ...old,
        resourceId: null,
        recipientKey: null,
      });
      expect(ids(await fresh.repos.events.listWithoutSubjects(10))).toEqual([old.id]);
      expect(await fresh.repos.events.idsAbout(scope, { resourceId: old.resourceId! }, 10)).toEqual([]);
      await fresh.repos.events.setSubjects([{ id: old.id, resourceId: old.resourceId!, recipientKey: "k" }]);
      expect(await fresh.repos.events.listWithoutSubjects(10)).toEqual([]);
      expect(await fresh.repos.events.idsAbout(scope, { recipientKey: "k" }, 10)).toEqual([old.id]);
      // A delivery record without erased_at (written before erasure existed) is erased like any other.
      const d = aDelivery(scope, { eventId: old.id, status: "failed", responseBody: "x" });
      await fresh.repos.deliveries.insertMany([d]);
      expect(
        await fresh.db.collection<DeliveryDoc>(COLLECTIONS.deliveries).findOne({ _id: d.id }),
      ).not.toHaveProperty("erased_at");
      expect(await fresh.repos.deliveries.erase(scope, [old.id], at(5))).toEqual({ erased: 1, cancelled: 0 });
    } finally {
      await fresh.cleanup();
    }
  });

  it("rejects with StoreUnavailableError, quickly, when nothing listens", async () => {
    const started = Date.now();
    const failure = await connectMongo("mongodb://127.0.0.1:9/", "herald_unreachable", {
      serverSelectionTimeoutMS: 300,
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(StoreUnavailableError);
    expect((failure as Error).message).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|Mongo/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("turns a lost connection into StoreUnavailableError on every repository", async () => {
    const fresh = await freshMongoRepositories("herald_test_closed");
    try {
      await fresh.repos.close();
      await expect(fresh.repos.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(fresh.repos.tokens.count()).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(fresh.repos.shards.heads()).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await fresh.cleanup();
    }
  });
});
