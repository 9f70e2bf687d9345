import { MongoServerError } from "mongodb";
import { describe, expect, it } from "vitest";
import { guarded, isBusy } from "../../../src/adapters/mongo/errors.ts";
import { StoreUnavailableError } from "../../../src/app/ports/store.ts";

const busy = () =>
  new MongoServerError({
    message: "[collection.go:177 sqlite.(*collection).UpdateAll.func1] database is locked (5) (SQLITE_BUSY)",
    code: 1,
  });

describe("a busy store (FerretDB SQLITE_BUSY)", () => {
  it("is recognised, and other server errors are not", () => {
    expect(isBusy(busy())).toBe(true);
    expect(isBusy(new MongoServerError({ message: "E11000 duplicate key", code: 11000 }))).toBe(false);
    expect(isBusy(new Error("database is locked"))).toBe(false);
  });

  it("is tried again until it answers", async () => {
    let calls = 0;
    const repo = guarded({
      async write(x: number) {
        calls++;
        if (calls < 3) throw busy();
        return x * 2;
      },
    });
    expect(await repo.write(21)).toBe(42);
    expect(calls).toBe(3);
  });

  it("becomes StoreUnavailableError (a 503, not a 500) when it stays busy, without driver text", async () => {
    let calls = 0;
    const repo = guarded({
      async write() {
        calls++;
        throw busy();
      },
    });
    const err = await repo.write().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).not.toMatch(/sqlite|locked/i);
    expect(calls).toBe(6);
  });

  it("does not retry other errors", async () => {
    let calls = 0;
    const repo = guarded({
      async write() {
        calls++;
        throw new Error("bug");
      },
    });
    await expect(repo.write()).rejects.toThrow("bug");
    expect(calls).toBe(1);
  });
});
