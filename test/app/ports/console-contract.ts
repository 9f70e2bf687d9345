import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type {
  ConsoleSessionRecord,
  ConsoleSessionRepository,
  DeliveryInsights,
} from "../../../src/app/ports/console.ts";
import type { Repositories } from "../../../src/app/ports/store.ts";
import { aDelivery, at, newScope, uuid } from "./fixtures.ts";

export interface ConsoleContractStore {
  /** The store the insights read; the test writes deliveries through it. */
  repos: Repositories;
  sessions: ConsoleSessionRepository;
  insights: DeliveryInsights;
  cleanup(): Promise<void>;
}

const aSession = (over: Partial<ConsoleSessionRecord> = {}): ConsoleSessionRecord => {
  const scope = newScope();
  return {
    id: uuid(),
    hash: uuid().replaceAll("-", "").repeat(2),
    kind: "console",
    tenantId: scope.tenantId,
    projectId: scope.projectId,
    webhookIds: null,
    csrfToken: "csrf-token",
    parentId: null,
    createdAt: at(0),
    expiresAt: at(60_000),
    usedAt: null,
    revokedAt: null,
    ...over,
  };
};

/** What every console store (sessions and delivery insights) owes the console's use cases. */
export function consoleContract(name: string, make: () => Promise<ConsoleContractStore>): void {
  describe(`console store contract: ${name}`, () => {
    let current: ConsoleContractStore | null = null;
    const s = (): ConsoleContractStore => {
      if (!current) throw new Error("no store");
      return current;
    };
    beforeEach(async () => {
      current = await make();
    });
    afterEach(async () => {
      await current?.cleanup();
      current = null;
    });

    it("finds sessions by hash and id, and revokes only within the scope and kind, once", async () => {
      const a = aSession({ webhookIds: [uuid()] });
      await s().sessions.insert(a);
      expect(await s().sessions.findByHash(a.hash)).toEqual(a);
      expect(await s().sessions.get(a.id)).toEqual(a);
      expect(await s().sessions.findByHash("0".repeat(64))).toBeNull();
      expect(await s().sessions.get(uuid())).toBeNull();

      const scope = { tenantId: a.tenantId, projectId: a.projectId };
      expect(await s().sessions.revoke(newScope(), "console", a.id, at(10))).toBe(false);
      expect(await s().sessions.revoke(scope, "portal_link", a.id, at(10))).toBe(false);
      expect(await s().sessions.revoke(scope, "console", a.id, at(10))).toBe(true);
      expect(await s().sessions.revoke(scope, "console", a.id, at(20))).toBe(false);
      expect((await s().sessions.get(a.id))?.revokedAt).toEqual(at(10));
    });

    it("consumes a single-use code once, even when two redeem it at the same time", async () => {
      const code = aSession({ kind: "sign_in_code" });
      await s().sessions.insert(code);
      const [first, second] = await Promise.all([
        s().sessions.consume(code.hash, at(5)),
        s().sessions.consume(code.hash, at(6)),
      ]);
      const winners = [first, second].filter((r) => r !== null);
      expect(winners).toHaveLength(1);
      expect(winners[0]?.id).toBe(code.id);
      expect(await s().sessions.consume(code.hash, at(7))).toBeNull();
      expect(await s().sessions.consume("f".repeat(64), at(7))).toBeNull();

      const revoked = aSession({ kind: "sign_in_code", revokedAt: at(1) });
      await s().sessions.insert(revoked);
      expect(await s().sessions.consume(revoked.hash, at(2))).toBeNull();
    });

    it("deletes records that expired before a moment, and only those", async () => {
      const old = aSession({ expiresAt: at(100) });
      const fresh = aSession({ expiresAt: at(10_000) });
      await s().sessions.insert(old);
      await s().sessions.insert(fresh);
      expect(await s().sessions.deleteExpiredBefore(at(5_000))).toBe(1);
      expect(await s().sessions.get(old.id)).toBeNull();
      expect(await s().sessions.get(fresh.id)).not.toBeNull();
    });

    it("summarises attempts, last successes and the due backlog of one project only", async () => {
      const scope = newScope();
      const other = newScope();
      const w1 = uuid();
      const w2 = uuid();
      await s().repos.deliveries.insertMany([
        aDelivery(scope, { webhookId: w1, status: "succeeded", attemptedAt: at(1000), createdAt: at(900) }),
        aDelivery(scope, { webhookId: w1, status: "succeeded", attemptedAt: at(3000), createdAt: at(2900) }),
        aDelivery(scope, { webhookId: w1, status: "failed", attemptedAt: at(4000), createdAt: at(3900) }),
        aDelivery(scope, { webhookId: w2, status: "failed", attemptedAt: at(500), createdAt: at(400) }),
        aDelivery(scope, { webhookId: w2, status: "pending", scheduledAt: at(100), createdAt: at(100) }),
        aDelivery(scope, { webhookId: w2, status: "pending", scheduledAt: at(9000), createdAt: at(100) }),
        aDelivery(other, { status: "succeeded", attemptedAt: at(2000) }),
        aDelivery(other, { status: "pending", scheduledAt: at(0) }),
      ]);
      const attempts = await s().insights.attemptsSince(scope, at(800), 100);
      expect(attempts.map((a) => [a.webhookId, a.status, a.attemptedAt.getTime()])).toEqual([
        [w1, "failed", at(4000).getTime()],
        [w1, "succeeded", at(3000).getTime()],
        [w1, "succeeded", at(1000).getTime()],
      ]);
      expect(await s().insights.attemptsSince(scope, at(0), 2)).toHaveLength(2);

      const last = await s().insights.lastSuccess(scope, [w1, w2]);
      expect(last.get(w1)).toEqual(at(3000));
      expect(last.has(w2)).toBe(false);

      expect(await s().insights.dueStats(scope, at(1000))).toEqual({ count: 1, oldestScheduledAt: at(100) });
      expect(await s().insights.dueStats(newScope(), at(1000))).toEqual({
        count: 0,
        oldestScheduledAt: null,
      });
      expect(await s().insights.dueStats(scope, at(1000), [w1])).toEqual({
        count: 0,
        oldestScheduledAt: null,
      });
      expect(await s().insights.dueStats(scope, at(1000), [w1, w2])).toEqual({
        count: 1,
        oldestScheduledAt: at(100),
      });
    });

    it("lists deliveries across endpoints newest first, filtered and paged, within the project", async () => {
      const scope = newScope();
      const w1 = uuid();
      const w2 = uuid();
      const w3 = uuid();
      const d = [
        aDelivery(scope, { webhookId: w1, createdAt: at(1), status: "failed" }),
        aDelivery(scope, {
          webhookId: w2,
          createdAt: at(2),
          status: "succeeded",
          eventType: "domain.verified",
        }),
        aDelivery(scope, { webhookId: w3, createdAt: at(3), status: "failed" }),
        aDelivery(scope, { webhookId: w1, createdAt: at(4), status: "failed" }),
      ];
      await s().repos.deliveries.insertMany([...d, aDelivery(newScope(), { createdAt: at(5) })]);
      const ids = (p: { data: { id: string }[] }) => p.data.map((x) => x.id);

      const all = await s().insights.list(scope, null, {}, { limit: 10, cursor: null });
      expect(ids(all)).toEqual([d[3]!.id, d[2]!.id, d[1]!.id, d[0]!.id]);
      expect(all.next).toBeNull();

      const first = await s().insights.list(scope, null, {}, { limit: 2, cursor: null });
      expect(ids(first)).toEqual([d[3]!.id, d[2]!.id]);
      const second = await s().insights.list(scope, null, {}, { limit: 2, cursor: first.next });
      expect(ids(second)).toEqual([d[1]!.id, d[0]!.id]);

      const some = await s().insights.list(scope, [w1, w2], {}, { limit: 10, cursor: null });
      expect(ids(some)).toEqual([d[3]!.id, d[1]!.id, d[0]!.id]);
      const failed = await s().insights.list(
        scope,
        null,
        { status: "failed", since: at(2), until: at(4) },
        {
          limit: 10,
          cursor: null,
        },
      );
      expect(ids(failed)).toEqual([d[2]!.id]);
      const typed = await s().insights.list(
        scope,
        null,
        { eventType: "domain.verified" },
        { limit: 10, cursor: null },
      );
      expect(ids(typed)).toEqual([d[1]!.id]);
      const byEvent = await s().insights.list(
        scope,
        null,
        { eventId: d[0]!.eventId },
        { limit: 10, cursor: null },
      );
      expect(ids(byEvent)).toEqual([d[0]!.id]);
      expect(byEvent.data[0]).toEqual(d[0]);
    });

    it("returns what was created or attempted since a moment, oldest change first", async () => {
      const scope = newScope();
      const created = aDelivery(scope, { createdAt: at(5000) });
      const attempted = aDelivery(scope, { createdAt: at(0), attemptedAt: at(4000), status: "failed" });
      const old = aDelivery(scope, { createdAt: at(0) });
      await s().repos.deliveries.insertMany([
        created,
        attempted,
        old,
        aDelivery(newScope(), { createdAt: at(6000) }),
      ]);
      const changed = await s().insights.changedSince(scope, at(3000), 10);
      expect(changed.map((x) => x.id)).toEqual([attempted.id, created.id]);
    });
  });
}
