import { describe, expect, it } from "vitest";
import type { Repositories } from "../../../src/app/ports/store.ts";
import type { Endpoint } from "../../../src/domain/endpoint.ts";
import { allPages, anEndpoint, at, ids, newScope, sortedIds, sortNewestFirst, T0, uuid } from "./fixtures.ts";

export function endpointContract(store: () => Repositories): void {
  describe("endpoints", () => {
    const insertAll = async (items: Endpoint[]) => {
      for (const e of items) await store().endpoints.insert(e);
    };

    it("returns an inserted endpoint exactly as it was given", async () => {
      const scope = newScope();
      const e = anEndpoint(scope, {
        events: ["message.delivered", "domain.verified"],
        description: "orders",
        secrets: [
          { sealed: "new", expiresAt: null },
          { sealed: "old", expiresAt: at(60_000) },
        ],
        updatedAt: at(5),
        failingSince: at(-1000),
      });
      await store().endpoints.insert(e);
      expect(await store().endpoints.get(scope, e.id)).toEqual(e);
    });

    it("keeps a rate limit through insert, update (set, change, remove) and getMany", async () => {
      const scope = newScope();
      const e = anEndpoint(scope, { rateLimit: { count: 5, per: "second" } });
      await store().endpoints.insert(e);
      expect((await store().endpoints.get(scope, e.id))?.rateLimit).toEqual({ count: 5, per: "second" });
      const changed = await store().endpoints.update(scope, e.id, {
        rateLimit: { count: 300, per: "minute" },
        updatedAt: at(1),
      });
      expect(changed?.rateLimit).toEqual({ count: 300, per: "minute" });
      expect((await store().endpoints.getMany([e.id]))[0]?.rateLimit).toEqual({ count: 300, per: "minute" });
      // A patch without the field leaves it; null removes it.
      await store().endpoints.update(scope, e.id, { description: "x", updatedAt: at(2) });
      expect((await store().endpoints.get(scope, e.id))?.rateLimit).toEqual({ count: 300, per: "minute" });
      await store().endpoints.update(scope, e.id, { rateLimit: null, updatedAt: at(3) });
      expect((await store().endpoints.get(scope, e.id))?.rateLimit).toBeNull();
    });

    it("keeps ordering through insert and update; listFifo answers the FIFO endpoints of every scope", async () => {
      const a = anEndpoint(newScope(), { ordering: "fifo" });
      const b = anEndpoint(newScope());
      await insertAll([a, b]);
      expect(
        (await store().endpoints.get({ tenantId: a.tenantId, projectId: a.projectId }, a.id))?.ordering,
      ).toBe("fifo");
      expect(await store().endpoints.listFifo()).toContain(a.id);
      expect(await store().endpoints.listFifo()).not.toContain(b.id);
      await store().endpoints.update({ tenantId: b.tenantId, projectId: b.projectId }, b.id, {
        ordering: "fifo",
        updatedAt: at(1),
      });
      await store().endpoints.update({ tenantId: a.tenantId, projectId: a.projectId }, a.id, {
        ordering: "none",
        updatedAt: at(1),
      });
      const fifo = await store().endpoints.listFifo();
      expect(fifo).toContain(b.id);
      expect(fifo).not.toContain(a.id);
    });

    it("keeps a client certificate through insert, update (replace, keep, remove), getMany and lists", async () => {
      const scope = newScope();
      const cert = {
        certificate: "-----BEGIN CERTIFICATE-----\nMIIBfirst\n-----END CERTIFICATE-----\n",
        sealedKey: "sealed-key-1",
        subject: "CN=alice",
        issuer: "CN=Client CA",
        notBefore: at(-86_400_000),
        notAfter: at(86_400_000),
        fingerprint: "39:b5:bf:da",
      };
      const e = anEndpoint(scope, { clientCertificate: cert });
      const plain = anEndpoint(scope);
      await insertAll([e, plain]);
      expect((await store().endpoints.get(scope, e.id))?.clientCertificate).toEqual(cert);
      expect((await store().endpoints.get(scope, plain.id))?.clientCertificate).toBeNull();
      const replaced = { ...cert, sealedKey: "sealed-key-2", subject: "CN=bob", notAfter: at(172_800_000) };
      const changed = await store().endpoints.update(scope, e.id, {
        clientCertificate: replaced,
        updatedAt: at(1),
      });
      expect(changed?.clientCertificate).toEqual(replaced);
      expect((await store().endpoints.getMany([e.id]))[0]?.clientCertificate).toEqual(replaced);
      const listed = (await allPages(10, (page) => store().endpoints.list(scope, {}, page))).pages.flat();
      expect(listed.find((x) => x.id === e.id)?.clientCertificate).toEqual(replaced);
      expect((await store().endpoints.listSubscribed(scope, "message.delivered")).length).toBe(2);
      // A patch without the field leaves it; null removes it.
      await store().endpoints.update(scope, e.id, { description: "x", updatedAt: at(2) });
      expect((await store().endpoints.get(scope, e.id))?.clientCertificate).toEqual(replaced);
      await store().endpoints.update(scope, e.id, { clientCertificate: null, updatedAt: at(3) });
      expect((await store().endpoints.get(scope, e.id))?.clientCertificate).toBeNull();
    });

    it("refuses a second endpoint with the same id", async () => {
      const scope = newScope();
      const e = anEndpoint(scope);
      await store().endpoints.insert(e);
      await expect(store().endpoints.insert({ ...e, url: "https://other.example/" })).rejects.toThrow();
      expect((await store().endpoints.get(scope, e.id))?.url).toBe(e.url);
    });

    it("hides an endpoint from another tenant and from another project of the same tenant", async () => {
      const scope = newScope();
      const e = anEndpoint(scope);
      await store().endpoints.insert(e);
      expect(await store().endpoints.get({ tenantId: uuid(), projectId: scope.projectId }, e.id)).toBeNull();
      expect(await store().endpoints.get({ tenantId: scope.tenantId, projectId: uuid() }, e.id)).toBeNull();
      expect(await store().endpoints.get(scope, uuid())).toBeNull();
    });

    it("getMany reads across scopes, in the order asked, skipping unknown ids", async () => {
      const a = anEndpoint(newScope());
      const b = anEndpoint(newScope());
      await insertAll([a, b]);
      expect(await store().endpoints.getMany([b.id, uuid(), a.id])).toEqual([b, a]);
      expect(await store().endpoints.getMany([])).toEqual([]);
    });

    it("lists newest first across pages, ordering equal timestamps by id, and ends with a null cursor", async () => {
      const scope = newScope();
      const mine = [
        ...[1, 2, 3].map(() => anEndpoint(scope, { createdAt: at(2000) })),
        ...[1, 2, 3].map(() => anEndpoint(scope, { createdAt: at(1000) })),
        anEndpoint(scope, { createdAt: at(0) }),
      ];
      const foreign = [
        anEndpoint({ tenantId: uuid(), projectId: scope.projectId }, { createdAt: at(1000) }),
        anEndpoint({ tenantId: scope.tenantId, projectId: uuid() }, { createdAt: at(1000) }),
      ];
      await insertAll([...foreign, ...mine]);
      const expected = ids(sortNewestFirst(mine));

      const { pages, cursors } = await allPages(3, (p) => store().endpoints.list(scope, {}, p));
      expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
      expect(pages.flat().map((e) => e.id)).toEqual(expected);
      expect(cursors[0]).toEqual({ createdAt: at(2000), id: expected[2] });
      expect(cursors[1]).toEqual({ createdAt: at(1000), id: expected[5] });
      expect(cursors[2]).toBeNull();
    });

    it("answers a page that holds exactly the rest with a null cursor", async () => {
      const scope = newScope();
      const mine = [0, 1, 2, 3].map((i) => anEndpoint(scope, { createdAt: at(i) }));
      await insertAll(mine);
      const whole = await store().endpoints.list(scope, {}, { limit: 4, cursor: null });
      expect(ids(whole.data)).toEqual(ids(sortNewestFirst(mine)));
      expect(whole.next).toBeNull();
      const first = await store().endpoints.list(scope, {}, { limit: 3, cursor: null });
      expect(first.next).not.toBeNull();
      const rest = await store().endpoints.list(scope, {}, { limit: 1, cursor: first.next });
      expect(ids(rest.data)).toEqual([mine[0]?.id]);
      expect(rest.next).toBeNull();
    });

    it("filters the list by enabled and by event type", async () => {
      const scope = newScope();
      const on = anEndpoint(scope, { events: ["message.sent", "message.bounced"], createdAt: at(1) });
      const off = anEndpoint(scope, {
        enabled: false,
        disabledReason: "manual",
        events: ["message.bounced"],
        createdAt: at(2),
      });
      const other = anEndpoint(scope, { events: ["domain.verified"], createdAt: at(3) });
      await insertAll([on, off, other]);
      const page = { limit: 10, cursor: null };
      expect(ids((await store().endpoints.list(scope, { enabled: true }, page)).data)).toEqual([
        other.id,
        on.id,
      ]);
      expect(ids((await store().endpoints.list(scope, { enabled: false }, page)).data)).toEqual([off.id]);
      expect(ids((await store().endpoints.list(scope, { event: "message.bounced" }, page)).data)).toEqual([
        off.id,
        on.id,
      ]);
      const both = await store().endpoints.list(scope, { enabled: true, event: "message.bounced" }, page);
      expect(ids(both.data)).toEqual([on.id]);
      expect((await store().endpoints.list(scope, { event: "message.clicked" }, page)).data).toEqual([]);
    });

    it("listSubscribed finds the project's endpoints for a type, enabled or not", async () => {
      const scope = newScope();
      const a = anEndpoint(scope, { events: ["message.sent", "message.opened"] });
      const b = anEndpoint(scope, { events: ["message.opened"], enabled: false, disabledReason: "gone" });
      const c = anEndpoint(scope, { events: ["message.sent"] });
      const foreign = anEndpoint(
        { tenantId: uuid(), projectId: scope.projectId },
        { events: ["message.opened"] },
      );
      const sibling = anEndpoint(
        { tenantId: scope.tenantId, projectId: uuid() },
        { events: ["message.opened"] },
      );
      await insertAll([a, b, c, foreign, sibling]);
      expect(sortedIds(await store().endpoints.listSubscribed(scope, "message.opened"))).toEqual(
        [a.id, b.id].sort(),
      );
      expect(await store().endpoints.listSubscribed(scope, "domain.verified")).toEqual([]);
    });

    it("update applies the defined fields, keeps the rest and returns the result", async () => {
      const scope = newScope();
      const e = anEndpoint(scope, { description: "before", failingSince: at(-5) });
      await store().endpoints.insert(e);
      const patched = await store().endpoints.update(scope, e.id, {
        url: undefined,
        events: ["domain.verified"],
        description: null,
        failingSince: null,
        secrets: [
          { sealed: "next", expiresAt: null },
          { sealed: "sealed-current", expiresAt: at(1000) },
        ],
        updatedAt: at(10),
      });
      const expected: Endpoint = {
        ...e,
        events: ["domain.verified"],
        description: null,
        failingSince: null,
        secrets: [
          { sealed: "next", expiresAt: null },
          { sealed: "sealed-current", expiresAt: at(1000) },
        ],
        updatedAt: at(10),
      };
      expect(patched).toEqual(expected);
      expect(await store().endpoints.get(scope, e.id)).toEqual(expected);

      const disabled = await store().endpoints.update(scope, e.id, {
        enabled: false,
        disabledReason: "manual",
        updatedAt: at(20),
      });
      expect(disabled).toEqual({ ...expected, enabled: false, disabledReason: "manual", updatedAt: at(20) });
    });

    it("keeps custom headers in their order and the signature scheme, and replaces them on update", async () => {
      const scope = newScope();
      const e = anEndpoint(scope, {
        headers: [
          { name: "X-Api-Key", sealed: "sealed-key" },
          { name: "authorization", sealed: "sealed-auth" },
        ],
        signatureScheme: "standard-webhooks",
      });
      await store().endpoints.insert(e);
      expect(await store().endpoints.get(scope, e.id)).toEqual(e);
      expect((await store().endpoints.list(scope, {}, { limit: 10, cursor: null })).data).toEqual([e]);
      expect(await store().endpoints.listSubscribed(scope, "message.delivered")).toEqual([e]);

      const headers = [{ name: "X-Route", sealed: "sealed-route" }];
      const patched = await store().endpoints.update(scope, e.id, {
        headers,
        signatureScheme: "herald-v1",
        updatedAt: at(10),
      });
      const expected: Endpoint = { ...e, headers, signatureScheme: "herald-v1", updatedAt: at(10) };
      expect(patched).toEqual(expected);
      expect(await store().endpoints.getMany([e.id])).toEqual([expected]);
      // Fields a patch leaves out stay as they are.
      const kept = await store().endpoints.update(scope, e.id, { description: "x", updatedAt: at(20) });
      expect(kept).toEqual({ ...expected, description: "x", updatedAt: at(20) });
      const cleared = await store().endpoints.update(scope, e.id, { headers: [], updatedAt: at(30) });
      expect(cleared?.headers).toEqual([]);
      expect(cleared?.signatureScheme).toBe("herald-v1");
    });

    it("update outside the scope or of an absent endpoint changes nothing and answers null", async () => {
      const scope = newScope();
      const e = anEndpoint(scope);
      await store().endpoints.insert(e);
      const patch = { url: "https://evil.example/", updatedAt: at(1) };
      expect(
        await store().endpoints.update({ tenantId: uuid(), projectId: scope.projectId }, e.id, patch),
      ).toBeNull();
      expect(
        await store().endpoints.update({ tenantId: scope.tenantId, projectId: uuid() }, e.id, patch),
      ).toBeNull();
      expect(await store().endpoints.update(scope, uuid(), patch)).toBeNull();
      expect(await store().endpoints.get(scope, e.id)).toEqual(e);
    });

    it("delete removes only inside the scope, once", async () => {
      const scope = newScope();
      const e = anEndpoint(scope);
      await store().endpoints.insert(e);
      expect(await store().endpoints.delete({ tenantId: uuid(), projectId: scope.projectId }, e.id)).toBe(
        false,
      );
      expect(await store().endpoints.delete({ tenantId: scope.tenantId, projectId: uuid() }, e.id)).toBe(
        false,
      );
      expect(await store().endpoints.get(scope, e.id)).toEqual(e);
      expect(await store().endpoints.delete(scope, e.id)).toBe(true);
      expect(await store().endpoints.get(scope, e.id)).toBeNull();
      expect(await store().endpoints.delete(scope, e.id)).toBe(false);
    });

    it("markFailing starts a streak only where none runs; markSucceeded ends it", async () => {
      const scope = newScope();
      const fresh = anEndpoint(scope);
      const failing = anEndpoint(scope, { failingSince: at(-60_000) });
      const untouched = anEndpoint(scope);
      await insertAll([fresh, failing, untouched]);

      await store().endpoints.markFailing([fresh.id, failing.id, uuid()], at(5000));
      const [f1, f2, u1] = await store().endpoints.getMany([fresh.id, failing.id, untouched.id]);
      expect(f1?.failingSince).toEqual(at(5000));
      expect(f2?.failingSince).toEqual(at(-60_000));
      expect(u1?.failingSince).toBeNull();

      await store().endpoints.markSucceeded([failing.id, uuid()]);
      const [g1, g2] = await store().endpoints.getMany([fresh.id, failing.id]);
      expect(g1?.failingSince).toEqual(at(5000));
      expect(g2?.failingSince).toBeNull();

      await store().endpoints.markFailing([], at(1));
      await store().endpoints.markSucceeded([]);
      expect((await store().endpoints.get(scope, fresh.id))?.failingSince).toEqual(at(5000));
    });

    it("listFailingSince finds enabled endpoints whose streak began at or before the moment", async () => {
      const scope = newScope();
      const early = anEndpoint(scope, { failingSince: at(0) });
      const onTheDot = anEndpoint(newScope(), { failingSince: at(1000) });
      const late = anEndpoint(scope, { failingSince: at(1001) });
      const disabled = anEndpoint(scope, { failingSince: at(0), enabled: false, disabledReason: "manual" });
      const healthy = anEndpoint(scope);
      // The younger streak stored first: what comes first is then the store's order, not insertion's.
      await insertAll([onTheDot, early, late, disabled, healthy]);

      expect(sortedIds(await store().endpoints.listFailingSince(at(1000), 10))).toEqual(
        [early.id, onTheDot.id].sort(),
      );
      // The oldest streak first.
      expect((await store().endpoints.listFailingSince(at(1000), 1)).map((e) => e.id)).toEqual([early.id]);
      expect(await store().endpoints.listFailingSince(at(-1), 10)).toEqual([]);
    });

    it("disable switches an enabled endpoint off once, keeping the first reason", async () => {
      const scope = newScope();
      const e = anEndpoint(scope, { failingSince: at(0) });
      await store().endpoints.insert(e);
      expect(await store().endpoints.disable(e.id, "failing", at(100))).toBe(true);
      const off = {
        ...e,
        enabled: false,
        disabledReason: "failing" as const,
        updatedAt: at(100),
        disabledAt: at(100),
        disabledNotice: null,
      };
      expect(await store().endpoints.get(scope, e.id)).toEqual(off);
      expect(await store().endpoints.disable(e.id, "gone", at(200))).toBe(false);
      expect(await store().endpoints.get(scope, e.id)).toEqual(off);
      expect(await store().endpoints.disable(uuid(), "gone", at(200))).toBe(false);
      expect(await store().endpoints.listFailingSince(at(1000), 10)).toEqual([]);
    });

    it("lists the operational events owed (ADR 20) and marks each reported once, by occurrence", async () => {
      const scope = newScope();
      const failing = anEndpoint(scope, { failingSince: at(0) });
      const young = anEndpoint(scope, { failingSince: at(5_000) });
      const reported = anEndpoint(scope, { failingSince: at(0), failingNotice: at(0) });
      const healthy = anEndpoint(scope);
      const wasOff = anEndpoint(scope, { enabled: false, disabledReason: "manual" });
      await insertAll([failing, young, reported, healthy, wasOff]);

      const owedFailing = await store().endpoints.listUnreported("failing", at(1_000), 10);
      expect(owedFailing.map((e) => e.id)).toEqual([failing.id]);
      // A disable without a known time (before Herald kept it) owes nothing.
      expect(await store().endpoints.listUnreported("disabled", at(1_000_000), 10)).toEqual([]);

      // A stale occurrence marks nothing; the right one marks once, and a repeat writes the same value.
      expect(await store().endpoints.markReported(failing.id, "failing", at(1))).toBe(false);
      expect(await store().endpoints.listUnreported("failing", at(1_000), 10)).toHaveLength(1);
      expect(await store().endpoints.markReported(failing.id, "failing", at(0))).toBe(true);
      expect(await store().endpoints.markReported(failing.id, "failing", at(0))).toBe(true);
      expect(await store().endpoints.listUnreported("failing", at(1_000), 10)).toEqual([]);
      expect((await store().endpoints.get(scope, failing.id))?.failingNotice).toEqual(at(0));

      // A success ends the streak; the next streak starts unreported.
      await store().endpoints.markSucceeded([failing.id]);
      await store().endpoints.markFailing([failing.id], at(9_000));
      const again = await store().endpoints.get(scope, failing.id);
      expect(again?.failingSince).toEqual(at(9_000));
      expect(again?.failingNotice).toBeNull();
      expect(
        (await store().endpoints.listUnreported("failing", at(10_000), 10)).map((e) => e.id).sort(),
      ).toEqual([failing.id, young.id].sort());

      // A disable owes endpoint.disabled once; disabling it again does nothing, enabling clears it.
      expect(await store().endpoints.disable(healthy.id, "gone", at(2_000))).toBe(true);
      expect(await store().endpoints.listUnreported("disabled", at(1_999), 10)).toEqual([]);
      const owedOff = await store().endpoints.listUnreported("disabled", at(2_000), 10);
      expect(owedOff.map((e) => [e.id, e.disabledAt, e.disabledReason])).toEqual([
        [healthy.id, at(2_000), "gone"],
      ]);
      // The oldest occurrence first: young's streak (5 s) before failing's new one (9 s).
      expect((await store().endpoints.listUnreported("failing", at(10_000), 1)).map((e) => e.id)).toEqual([
        young.id,
      ]);
      expect(await store().endpoints.markReported(healthy.id, "disabled", at(2_000))).toBe(true);
      expect(await store().endpoints.listUnreported("disabled", at(3_000), 10)).toEqual([]);
      expect((await store().endpoints.get(scope, healthy.id))?.disabledNotice).toEqual(at(2_000));
      // A manual disable through update sets the same fields the use case gives it.
      await store().endpoints.update(scope, young.id, {
        enabled: false,
        disabledReason: "manual",
        disabledAt: at(4_000),
        disabledNotice: null,
        updatedAt: at(4_000),
      });
      expect((await store().endpoints.listUnreported("disabled", at(5_000), 10)).map((e) => e.id)).toEqual([
        young.id,
      ]);
      await store().endpoints.update(scope, young.id, {
        enabled: true,
        disabledReason: null,
        disabledAt: null,
        disabledNotice: null,
        updatedAt: at(6_000),
      });
      expect(await store().endpoints.listUnreported("disabled", at(7_000), 10)).toEqual([]);
      // Disabled endpoints' streaks are not failing notices: the endpoint is off.
      expect(
        (await store().endpoints.listUnreported("failing", at(10_000), 10)).map((e) => e.id).sort(),
      ).toEqual([failing.id, young.id].sort());
    });

    it("keeps stored state apart from the objects callers hold", async () => {
      const scope = newScope();
      const e = anEndpoint(scope, { createdAt: T0 });
      await store().endpoints.insert(e);
      e.events.push("message.sent");
      const read = await store().endpoints.get(scope, e.id);
      read?.events.push("message.failed");
      expect((await store().endpoints.get(scope, e.id))?.events).toEqual(["message.delivered"]);
    });

    // A filter's keys start with $ and hold dots, which a document store reads as operators and paths.
    const FILTER = {
      "data.channel": { $in: ["email", "sms"] },
      $or: [{ "data.metadata.tier": "gold" }, { "data.status": { $not: { $regex: "^bou", $options: "i" } } }],
      occurred_at: { $gte: "2026-11-21T10:00:00Z" },
      "data.metadata.a.b": { $exists: true, $ne: null },
      type: { $nin: [] },
    };

    it("returns a filter exactly as it was given: operators, dotted keys, nulls, empty arrays", async () => {
      const scope = newScope();
      const e = anEndpoint(scope, { filter: FILTER });
      await store().endpoints.insert(e);
      expect(await store().endpoints.get(scope, e.id)).toEqual(e);
      expect((await store().endpoints.getMany([e.id]))[0]?.filter).toEqual(FILTER);
      expect((await store().endpoints.listSubscribed(scope, "message.delivered"))[0]?.filter).toEqual(FILTER);
      const listed = await store().endpoints.list(scope, {}, { limit: 10, cursor: null });
      expect(listed.data[0]?.filter).toEqual(FILTER);
    });

    it("update sets, replaces and (with null) removes a filter; an update without one keeps it", async () => {
      const scope = newScope();
      const e = anEndpoint(scope);
      await store().endpoints.insert(e);
      const set = await store().endpoints.update(scope, e.id, { filter: FILTER, updatedAt: at(1) });
      expect(set).toEqual({ ...e, filter: FILTER, updatedAt: at(1) });
      const kept = await store().endpoints.update(scope, e.id, { description: "x", updatedAt: at(2) });
      expect(kept?.filter).toEqual(FILTER);
      const replaced = await store().endpoints.update(scope, e.id, {
        filter: { type: "message.delivered" },
        updatedAt: at(3),
      });
      expect(replaced?.filter).toEqual({ type: "message.delivered" });
      const removed = await store().endpoints.update(scope, e.id, { filter: null, updatedAt: at(4) });
      expect(removed?.filter).toBeNull();
      expect((await store().endpoints.get(scope, e.id))?.filter).toBeNull();
    });

    it("keeps a stored filter apart from the objects callers hold", async () => {
      const scope = newScope();
      const filter = { "data.channel": { $in: ["email"] } };
      const e = anEndpoint(scope, { filter });
      await store().endpoints.insert(e);
      filter["data.channel"].$in.push("sms");
      const read = await store().endpoints.get(scope, e.id);
      expect(read?.filter).not.toBeNull();
      (read!.filter!["data.channel"] as { $in: string[] }).$in.push("push");
      expect((await store().endpoints.get(scope, e.id))?.filter).toEqual({
        "data.channel": { $in: ["email"] },
      });
    });
  });
}
