import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { isBlockedAddress } from "../../../src/adapters/delivery/address-policy.ts";
import { BLOCKED_ADDRESS_CODE, createGuardedLookup } from "../../../src/adapters/delivery/guarded-lookup.ts";
import { failingLookup, scriptedLookup } from "./helpers.ts";

type Answer = {
  err: NodeJS.ErrnoException | null;
  address: string | LookupAddress[];
  family?: number | undefined;
};

function call(
  lookup: ReturnType<typeof createGuardedLookup>,
  host: string,
  options: { all?: boolean; family?: number },
) {
  return new Promise<Answer>((resolve) =>
    lookup(host, options, (err, address, family) => resolve({ err, address, family })),
  );
}

describe("createGuardedLookup", () => {
  it("refuses a rebinding name at the lookup that returns a private address", async () => {
    const resolve = scriptedLookup(["93.184.216.34"], ["169.254.169.254"]);
    const lookup = createGuardedLookup(resolve, isBlockedAddress);

    const first = await call(lookup, "rebind.example.test", { all: true });
    expect(first.err).toBeNull();
    expect(first.address).toEqual([{ address: "93.184.216.34", family: 4 }]);

    const second = await call(lookup, "rebind.example.test", { all: true });
    expect(second.err?.code).toBe(BLOCKED_ADDRESS_CODE);
    expect(second.err?.message).toContain("169.254.169.254");
    expect(resolve.calls).toHaveLength(2);
  });

  it("refuses when any address is blocked, even if the first is public", async () => {
    const lookup = createGuardedLookup(scriptedLookup(["8.8.8.8", "::1"]), isBlockedAddress);
    expect((await call(lookup, "mixed.example.test", { all: true })).err?.code).toBe(BLOCKED_ADDRESS_CODE);
  });

  it("answers in both shapes net.connect asks for, honouring the family", async () => {
    const lookup = createGuardedLookup(scriptedLookup(["2606:4700::1", "1.1.1.1"]), isBlockedAddress);
    expect(await call(lookup, "h", {})).toEqual({ err: null, address: "2606:4700::1", family: 6 });
    expect(await call(lookup, "h", { family: 4 })).toEqual({ err: null, address: "1.1.1.1", family: 4 });
    expect((await call(lookup, "h", { all: true, family: 6 })).address).toEqual([
      { address: "2606:4700::1", family: 6 },
    ]);
  });

  it("passes resolver failures through with their code", async () => {
    const lookup = createGuardedLookup(failingLookup("EAI_AGAIN"), isBlockedAddress);
    expect((await call(lookup, "h", { all: true })).err?.code).toBe("EAI_AGAIN");
    const empty = createGuardedLookup(scriptedLookup([]), isBlockedAddress);
    expect((await call(empty, "h", { all: true })).err?.code).toBe("ENOTFOUND");
  });
});
