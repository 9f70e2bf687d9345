import { describe, expect, it } from "vitest";
import { COLLECTIONS } from "../../src/adapters/mongo/collections.ts";
import { createMongoConsoleStore } from "../../src/adapters/mongo/console.ts";
import type { DeliveryDoc } from "../../src/adapters/mongo/documents.ts";
import { connectMongo } from "../../src/adapters/mongo/index.ts";
import { ensureIndexes, INDEXES } from "../../src/adapters/mongo/indexes.ts";
import { StoreUnavailableError } from "../../src/app/ports/store.ts";
import { freshMongoRepositories } from "../support/mongo.ts";
import { consoleContract } from "./console-contract.ts";
import { aDelivery, at, ids, newScope } from "./fixtures.ts";
import { repositoryContract } from "./repository-contract.ts";

repositoryContract("mongo", () => freshMongoRepositories("herald_test_contract"));

consoleContract("mongo", async () => {
  const fresh = await freshMongoRepositories("herald_test_console");
  const store = await createMongoConsoleStore(fresh.db);
  return { repos: fresh.repos, ...store, cleanup: fresh.cleanup };
});

describe("mongo adapter", () => {
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

  it("takes over a delivery whose record lags behind its newest lease, but only once that lease expired", async () => {
    const fresh = await freshMongoRepositories("herald_test_leases");
    try {
      const scope = newScope();
      const d = aDelivery(scope, { scheduledAt: at(0) });
      await fresh.repos.deliveries.insertMany([d]);
      const claim = (now: Date) =>
        fresh.repos.deliveries.claimDue({ now, owner: "w", leaseMs: 1000, limit: 10, excludeWebhookIds: [] });
      expect(ids(await claim(at(0)))).toEqual([d.id]);
      // What a lost update on FerretDB can leave behind: the record looks unleased at an older generation.
      await fresh.db
        .collection<DeliveryDoc>("deliveries")
        .updateOne(
          { _id: d.id },
          { $set: { lease_version: 0, lease_owner: null, lease_expires_at: new Date(0) } },
        );

      expect(await claim(at(999))).toEqual([]);
      const [taken] = await claim(at(1000));
      expect(taken?.id).toBe(d.id);
      await fresh.repos.deliveries.complete([
        {
          id: d.id,
          leaseOwner: taken!.leaseOwner,
          status: "succeeded",
          responseStatus: 200,
          responseBody: "",
          error: null,
          durationMs: 3,
          attemptedAt: at(1001),
          nextAttemptAt: null,
          next: null,
        },
      ]);
      expect((await fresh.repos.deliveries.get(scope, d.id))?.status).toBe("succeeded");
    } finally {
      await fresh.cleanup();
    }
  });

  it("forgets leases that expired before the retention cut-off", async () => {
    const fresh = await freshMongoRepositories("herald_test_leases");
    try {
      const scope = newScope();
      await fresh.repos.deliveries.insertMany([
        aDelivery(scope),
        aDelivery(scope, { scheduledAt: at(5000) }),
      ]);
      const claim = (now: Date) =>
        fresh.repos.deliveries.claimDue({ now, owner: "w", leaseMs: 1000, limit: 10, excludeWebhookIds: [] });
      const [first] = await claim(at(0));
      await fresh.repos.deliveries.release(first!.leaseOwner, [first!.id]);
      await fresh.repos.deliveries.cancelPending(first!.webhookId, at(1));
      expect(await claim(at(5000))).toHaveLength(1);
      const leases = fresh.db.collection(COLLECTIONS.leases);
      expect(await leases.countDocuments({})).toBe(2);
      await fresh.repos.deliveries.deleteCreatedBefore(at(2000));
      expect(await leases.countDocuments({})).toBe(1);
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
      await expect(fresh.repos.deliveries.nextDueAt()).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await fresh.cleanup();
    }
  });
});
