import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256Hex, toHex } from "../../src/domain/encoding.ts";
import { sha256 } from "../../src/domain/sha256.ts";

describe("sha256", () => {
  it("matches the FIPS test vectors", () => {
    expect(toHex(sha256(new Uint8Array()))).toBe(
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
    expect(toHex(sha256(new TextEncoder().encode("abc")))).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(
      toHex(sha256(new TextEncoder().encode("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
    ).toBe("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  });

  it("matches node:crypto for every length across block boundaries", async () => {
    for (let n = 0; n < 300; n++) {
      const bytes = randomBytes(n);
      expect(toHex(sha256(new Uint8Array(bytes)))).toBe(createHash("sha256").update(bytes).digest("hex"));
    }
    expect(await sha256Hex("héllo")).toBe(createHash("sha256").update("héllo", "utf8").digest("hex"));
  });
});
