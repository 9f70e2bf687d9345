import { describe, expect, it } from "vitest";
import { createSubjectKeys } from "../../src/adapters/crypto/subject-keys.ts";
import {
  erasureSubject,
  normalizeRecipient,
  projectRetention,
  subjectsOf,
} from "../../src/domain/erasure.ts";
import { DomainError } from "../../src/domain/errors.ts";

const issuesOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    if (e instanceof DomainError) return e.issues;
    throw e;
  }
  throw new Error("no error");
};

describe("erasure subjects", () => {
  it("takes exactly one of resource_id (a UUID, lowercased) and recipient (normalised)", () => {
    const id = "6F1C2B9E-8A44-4C1E-9A53-0D5B2F7E1A10";
    expect(erasureSubject({ resourceId: id })).toEqual({ kind: "resource_id", resourceId: id.toLowerCase() });
    expect(erasureSubject({ recipient: "  Ada@Example.COM " })).toEqual({
      kind: "recipient",
      recipient: "ada@example.com",
    });
    expect(issuesOf(() => erasureSubject({}))).toEqual([
      { path: "resource_id", message: expect.any(String) },
    ]);
    expect(issuesOf(() => erasureSubject({ resourceId: id, recipient: "a@b.c" }))[0]?.path).toBe("recipient");
    expect(issuesOf(() => erasureSubject({ resourceId: "evt_1" }))[0]?.path).toBe("resource_id");
    expect(issuesOf(() => erasureSubject({ recipient: "   " }))[0]?.path).toBe("recipient");
    expect(issuesOf(() => erasureSubject({ recipient: "x".repeat(321) }))[0]?.path).toBe("recipient");
  });

  it("reads an envelope's resource id and recipient as erasure matches them", () => {
    expect(subjectsOf({ resource_id: "ABC", data: { recipient: " Ada@Example.com" } })).toEqual({
      resourceId: "abc",
      recipient: "ada@example.com",
    });
    expect(subjectsOf({ resource_id: "abc", data: { domain: "mail.example.com" } })).toEqual({
      resourceId: "abc",
      recipient: null,
    });
    expect(normalizeRecipient("+1 555 0100")).toBe("+1 555 0100");
  });

  it("a project's retention is a duration from 1m to the server's, in HERALD_RETENTION's format", () => {
    const max = 30 * 86_400_000;
    expect(projectRetention("7d", max)).toBe(7 * 86_400_000);
    expect(projectRetention("1m", max)).toBe(60_000);
    expect(projectRetention("30d", max)).toBe(max);
    for (const bad of ["31d", "59s", "7", "7 days", "", "1w"]) {
      expect(issuesOf(() => projectRetention(bad, max))[0]?.path).toBe("retention");
    }
  });
});

describe("recipient keys", () => {
  it("are stable under one master key, differ per project and per master key, and do not contain the address", async () => {
    const master = crypto.getRandomValues(new Uint8Array(32));
    const keys = await createSubjectKeys(master);
    const again = await createSubjectKeys(new Uint8Array(master));
    const other = await createSubjectKeys(crypto.getRandomValues(new Uint8Array(32)));
    const p1 = { tenantId: "t", projectId: "p1" };
    const p2 = { tenantId: "t", projectId: "p2" };
    const k = await keys.recipientKey(p1, "ada@example.com");
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(await again.recipientKey(p1, "ada@example.com")).toBe(k);
    expect(await keys.recipientKey(p2, "ada@example.com")).not.toBe(k);
    expect(await other.recipientKey(p1, "ada@example.com")).not.toBe(k);
    expect(await keys.recipientKey(p1, "bob@example.com")).not.toBe(k);
    await expect(createSubjectKeys(new Uint8Array(16))).rejects.toThrow(/32 bytes/);
  });

  it("keeps the keys stored by earlier versions: HMAC-SHA256 under HMAC-SHA256(master, purpose), as Web Crypto computes it", async () => {
    const master = new Uint8Array(32).map((_, i) => i * 7);
    const hmac = async (key: BufferSource, text: string) =>
      crypto.subtle.sign(
        "HMAC",
        await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]),
        new TextEncoder().encode(text),
      );
    const derived = await hmac(master, "herald/subject-keys/v1");
    const expected = Buffer.from(await hmac(derived, "t/p/ada@example.com")).toString("hex");
    // The value the Web Crypto implementation stored before 2026-11-26, pinned.
    expect(expected).toBe("c1d356491f020199d67a8bb8b99bc9583d32851ce311aeaacd603f9e625e3ba4");
    expect(
      await (await createSubjectKeys(master)).recipientKey(
        { tenantId: "t", projectId: "p" },
        "ada@example.com",
      ),
    ).toBe(expected);
  });
});
