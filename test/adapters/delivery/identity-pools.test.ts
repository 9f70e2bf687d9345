import { describe, expect, it } from "vitest";
import { IdentityPools } from "../../../src/adapters/delivery/identity-pools.ts";
import type { ClientIdentity } from "../../../src/app/ports/sending.ts";

describe("IdentityPools", () => {
  it("makes one pool per identity, reuses it, and closes the least recently used beyond the limit", async () => {
    const closed: string[] = [];
    const made: string[] = [];
    const pools = new IdentityPools((id) => {
      made.push(id.id);
      return { name: id.id, close: async () => void closed.push(id.id) };
    }, 2);
    const id = (name: string): ClientIdentity => ({ id: name, certificate: "c", key: "k" });
    expect(pools.get(id("a")).name).toBe("a");
    pools.get(id("b"));
    expect(pools.get(id("a")).name).toBe("a");
    pools.get(id("c"));
    expect(made).toEqual(["a", "b", "c"]);
    expect(closed).toEqual(["b"]);
    expect(pools.size).toBe(2);
    await pools.close();
    expect(closed.sort()).toEqual(["a", "b", "c"]);
    expect(pools.size).toBe(0);
  });
});
