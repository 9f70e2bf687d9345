import { describe, expect, it } from "vitest";
import type { Repositories } from "../../../src/app/ports/store.ts";
import type { IdempotencyRecord } from "../../../src/app/ports/tokens.ts";
import { aToken, at, newScope, uuid } from "./fixtures.ts";

export function tokenContract(store: () => Repositories): void {
  describe("tokens", () => {
    it("finds a token by its hash, lists newest first, counts, and revokes once", async () => {
      expect(await store().tokens.count()).toBe(0);
      expect(await store().tokens.list()).toEqual([]);
      const older = aToken(newScope(), { createdAt: at(0), name: "ci" });
      const newer = aToken(newScope(), { createdAt: at(1000) });
      await store().tokens.insert(older);
      await store().tokens.insert(newer);

      expect(await store().tokens.findByHash(newer.hash)).toEqual(newer);
      expect(await store().tokens.findByHash("0".repeat(64))).toBeNull();
      expect(await store().tokens.list()).toEqual([newer, older]);
      expect(await store().tokens.count()).toBe(2);

      expect(await store().tokens.revoke(older.id, at(5000))).toBe(true);
      expect(await store().tokens.findByHash(older.hash)).toEqual({ ...older, revokedAt: at(5000) });
      expect(await store().tokens.revoke(older.id, at(6000))).toBe(false);
      expect((await store().tokens.findByHash(older.hash))?.revokedAt).toEqual(at(5000));
      expect(await store().tokens.revoke(uuid(), at(6000))).toBe(false);
      expect(await store().tokens.count()).toBe(2);
    });
  });

  describe("idempotency", () => {
    const record = (over: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
      scopeKey: `${uuid()}/${uuid()}/key-1`,
      eventId: `evt_${uuid().replaceAll("-", "")}`,
      fingerprint: "sha256:aaaa",
      createdAt: at(0),
      ...over,
    });

    it("deletes records created before a moment, and only those", async () => {
      const old = record({ createdAt: at(-1) });
      const fresh = record({ createdAt: at(0) });
      await store().idempotency.reserve(old, at(-86_400_000));
      await store().idempotency.reserve(fresh, at(-86_400_000));
      expect(await store().idempotency.deleteCreatedBefore(at(0))).toBeGreaterThanOrEqual(1);
      // The old key is free again; the fresh one still answers with itself.
      const reused = record({ scopeKey: old.scopeKey, eventId: "evt_new", createdAt: at(5) });
      expect(await store().idempotency.reserve(reused, at(-86_400_000 * 2))).toEqual(reused);
      expect(await store().idempotency.reserve(record({ scopeKey: fresh.scopeKey }), at(-1))).toEqual(fresh);
    });

    it("stores a new key and answers with it", async () => {
      const r = record();
      expect(await store().idempotency.reserve(r, at(-86_400_000))).toEqual(r);
    });

    it("answers with the held record while it is not older than notBefore", async () => {
      const first = record({ createdAt: at(1000) });
      await store().idempotency.reserve(first, at(0));
      const second = record({ scopeKey: first.scopeKey, createdAt: at(2000), fingerprint: "sha256:bbbb" });
      expect(await store().idempotency.reserve(second, at(500))).toEqual(first);
      expect(await store().idempotency.reserve(second, at(1000))).toEqual(first);
    });

    it("replaces a record older than notBefore, and then holds the replacement", async () => {
      const first = record({ createdAt: at(0) });
      await store().idempotency.reserve(first, at(-1));
      const second = record({ scopeKey: first.scopeKey, createdAt: at(90_000) });
      expect(await store().idempotency.reserve(second, at(1))).toEqual(second);
      const third = record({ scopeKey: first.scopeKey, createdAt: at(91_000) });
      expect(await store().idempotency.reserve(third, at(1))).toEqual(second);
    });

    it("finds the record holding a key while it is not older than notBefore, and writes nothing", async () => {
      const held = record({ createdAt: at(1000) });
      expect(await store().idempotency.find(held.scopeKey, at(0))).toBeNull();
      await store().idempotency.reserve(held, at(0));
      expect(await store().idempotency.find(held.scopeKey, at(1000))).toEqual(held);
      expect(await store().idempotency.find(held.scopeKey, at(1001))).toBeNull();
      expect(await store().idempotency.find(record().scopeKey, at(0))).toBeNull();
      // A miss reserved nothing: the key is still free for another event.
      const other = record({ scopeKey: `${held.scopeKey}-other`, createdAt: at(5) });
      expect(await store().idempotency.find(other.scopeKey, at(0))).toBeNull();
      expect(await store().idempotency.reserve(other, at(0))).toEqual(other);
    });

    it("keeps keys apart", async () => {
      const a = record();
      const b = record({ createdAt: at(5) });
      expect(await store().idempotency.reserve(a, at(-1))).toEqual(a);
      expect(await store().idempotency.reserve(b, at(-1))).toEqual(b);
    });

    it("gives every concurrent reservation of one key the same answer", async () => {
      const scopeKey = `${uuid()}/${uuid()}/key-race`;
      const candidates = [1, 2, 3, 4, 5].map((i) => record({ scopeKey, createdAt: at(i) }));
      const answers = await Promise.all(candidates.map((c) => store().idempotency.reserve(c, at(-1))));
      expect(candidates).toContainEqual(answers[0]);
      for (const a of answers) expect(a).toEqual(answers[0]);
    });
  });
}
