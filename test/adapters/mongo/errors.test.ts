import { MongoServerError } from "mongodb";
import { describe, expect, it } from "vitest";
import { isDuplicateKey } from "../../../src/adapters/mongo/errors.ts";

describe("classifying a duplicate key answer", () => {
  it("recognises MongoDB's and FerretDB v1's code 11000", () => {
    expect(isDuplicateKey(new MongoServerError({ message: "E11000 duplicate key error", code: 11000 }))).toBe(
      true,
    );
  });

  it("recognises FerretDB 2's code 1 with PostgreSQL's unique-constraint message (an upsert colliding on _id)", () => {
    const ferret2 = new MongoServerError({
      message: 'duplicate key value violates unique constraint "idempotency_keys_pkey"',
      code: 1,
      codeName: "InternalError",
    });
    expect(isDuplicateKey(ferret2)).toBe(true);
  });

  it("does not take other code-1 answers, or errors that are not the server's, for duplicates", () => {
    expect(
      isDuplicateKey(new MongoServerError({ message: "database is locked (SQLITE_BUSY)", code: 1 })),
    ).toBe(false);
    expect(isDuplicateKey(new MongoServerError({ message: "something else", code: 2 }))).toBe(false);
    expect(isDuplicateKey(new Error("duplicate key value violates unique constraint"))).toBe(false);
  });
});
