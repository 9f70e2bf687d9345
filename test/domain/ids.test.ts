import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/domain/encoding.ts";
import { firstDeliveryId, nextDeliveryId, UUID_PATTERN, uuidFromName } from "../../src/domain/ids.ts";

// The values below were computed with the hand-written SHA-256 that @noble/hashes replaced: ids a
// process derived before the change must be derived again after it (a fan-out resumed across an
// upgrade would otherwise duplicate deliveries), and token hashes stored before it must still be found.
describe("derived ids and token hashes are unchanged by the SHA-256 implementation", () => {
  it("derives the same record ids as before", () => {
    expect(uuidFromName("")).toBe("e3b0c442-98fc-8c14-9afb-f4c8996fb924");
    expect(uuidFromName("herald")).toBe("1c85bf7d-3c26-8817-9b54-3a95c0e52d02");
    expect(uuidFromName("ünïcödé 😀")).toBe("b67b067c-bbd0-8825-8fb1-7eb846d3a2f6");
    expect(
      firstDeliveryId("0192f1e2-aaaa-7bbb-8ccc-000000000001", "0192f1e2-aaaa-7bbb-8ccc-000000000002"),
    ).toBe("302bc80b-b3dc-8c29-ac17-6f1ae21db653");
    expect(nextDeliveryId("0192f1e2-aaaa-7bbb-8ccc-000000000003")).toBe(
      "58a446e9-1860-8e35-8e07-58ab06b9d28d",
    );
    expect(uuidFromName("herald")).toMatch(UUID_PATTERN);
  });

  it("hashes tokens and secrets to the same lookup keys as before", async () => {
    expect(await sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(await sha256Hex("hrld_sk_0123456789abcdefghijklmnopqrstuvwxyz")).toBe(
      "930dd22fe9f781fe308ca4d9dd1c8ac8575049b0e5146cc838b80f49616b68c0",
    );
    expect(await sha256Hex("héllo")).toBe("3c48591d8d098a4538f5e013dfcf406e948eac4d3277b10bf614e295d6068179");
    // Past one 64-byte block.
    expect(await sha256Hex("x".repeat(200))).toBe(
      "aa20c23e3201834050679e1d88941b9a6fed0557c9a705cb2c315e2e63fd486d",
    );
  });

  it("agrees with node:crypto on every length across block boundaries", async () => {
    for (let n = 0; n < 300; n += 7) {
      const text = "é".repeat(n % 5) + "a".repeat(n);
      expect(await sha256Hex(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
    }
  });
});
