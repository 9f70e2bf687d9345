import { MongoBulkWriteError, MongoServerError, type WriteError } from "mongodb";
import { describe, expect, it } from "vitest";
import { insertAnswers, isUnavailable, translate } from "../../../src/adapters/mongo/errors.ts";
import { StoreUnavailableError } from "../../../src/app/ports/store.ts";

// Answers FerretDB 2 (DocumentDB on PostgreSQL) and FerretDB v1 gave while PostgreSQL under them crashed,
// restarted or had a backend terminated: server errors with a message, code 1 (InternalError) or none.
const OUTAGE_TEXTS = [
  "unexpected EOF",
  "FATAL: the database system is in recovery mode (SQLSTATE 57P03)",
  "the database system is starting up",
  "FATAL: the database system is shutting down (SQLSTATE 57P03)",
  "FATAL: terminating connection due to administrator command (SQLSTATE 57P01)",
  "terminating connection due to crash of another server process",
  "server closed the connection unexpectedly",
  "read tcp 127.0.0.1:51234->127.0.0.1:5432: read: connection reset by peer",
  "write tcp 127.0.0.1:51234->127.0.0.1:5432: write: broken pipe",
  "failed to connect to `host=127.0.0.1 user=postgres database=postgres`: dial error (dial tcp 127.0.0.1:5432: connect: connection refused)",
  "conn closed",
  "FATAL: sorry, too many clients already (SQLSTATE 53300)",
];

// Answers about the request itself: they stay what they are (a 4xx or a bug, never 503).
const REQUEST_TEXTS = [
  "E11000 duplicate key error collection: herald.deliveries index: _id_ dup key",
  'duplicate key value violates unique constraint "deliveries_pkey"',
  "unknown operator: $foo",
  "Document too large",
  "invalid input syntax for type json",
  "the recovery of the message failed", // a word of an outage text, not the text
  "EOF in field name",
  "database system is fine",
];

/** A bulk write refused statement by statement, as the driver raises it (no write concern error). */
const bulk = (writeErrors: { index: number; code: number; errmsg: string }[], message = "bulk refused") =>
  new MongoBulkWriteError(
    {
      message,
      code: writeErrors[0]?.code ?? 1,
      writeErrors: writeErrors as unknown as WriteError[],
    },
    {
      getWriteConcernError: () => undefined,
    } as unknown as ConstructorParameters<typeof MongoBulkWriteError>[1],
  );

describe("classifying what a PostgreSQL-backed server answers while PostgreSQL cannot serve", () => {
  it.each(OUTAGE_TEXTS)("%s is unavailable (503), with code 1 or none", (message) => {
    expect(isUnavailable(new MongoServerError({ message, code: 1, codeName: "InternalError" }))).toBe(true);
    expect(isUnavailable(new MongoServerError({ message }))).toBe(true);
    expect(translate(new MongoServerError({ message, code: 1 }))).toBeInstanceOf(StoreUnavailableError);
  });

  it.each(REQUEST_TEXTS)("%s stays an answer about the request", (message) => {
    const e = new MongoServerError({ message, code: message.startsWith("E11000") ? 11000 : 1 });
    expect(isUnavailable(e)).toBe(false);
    expect(translate(e)).toBe(e);
  });

  it("a duplicate answer is never unavailable, whatever else its text says", () => {
    const e = new MongoServerError({
      message: 'duplicate key value violates unique constraint "x" (SQLSTATE 57P01)',
      code: 1,
    });
    expect(isUnavailable(e)).toBe(false);
  });

  it("the text is only read from the server's answers, not from any error", () => {
    expect(isUnavailable(new Error("unexpected EOF"))).toBe(false);
    expect(isUnavailable(new TypeError("the database system is in recovery mode"))).toBe(false);
  });

  it("a bulk write: unavailable when its refusals are the database's state (duplicates aside), not when one is the statement's", () => {
    expect(isUnavailable(bulk([{ index: 0, code: 1, errmsg: "unexpected EOF" }]))).toBe(true);
    expect(
      isUnavailable(
        bulk([
          { index: 0, code: 11000, errmsg: "E11000 duplicate key error" },
          { index: 1, code: 1, errmsg: "the database system is in recovery mode" },
        ]),
      ),
    ).toBe(true);
    expect(
      isUnavailable(
        bulk([
          { index: 0, code: 1, errmsg: "unexpected EOF" },
          { index: 1, code: 2, errmsg: "unknown operator: $foo" },
        ]),
      ),
    ).toBe(false);
    expect(isUnavailable(bulk([{ index: 0, code: 11000, errmsg: "E11000 duplicate key error" }]))).toBe(
      false,
    );
    expect(isUnavailable(bulk([], "unexpected EOF"))).toBe(true);
  });

  it("an insert's position refused for the database's state answers StoreUnavailableError; a duplicate is false; another refusal is its own error", async () => {
    const answers = await insertAnswers(async () => {
      throw bulk([
        { index: 0, code: 11000, errmsg: "E11000 duplicate key error" },
        { index: 1, code: 1, errmsg: "terminating connection due to administrator command" },
        { index: 2, code: 2, errmsg: "unknown operator: $foo" },
      ]);
    }, 4);
    expect(answers[0]).toEqual({ ok: false });
    expect((answers[1] as { error: unknown }).error).toBeInstanceOf(StoreUnavailableError);
    const own = (answers[2] as { error: Error }).error;
    expect(own).not.toBeInstanceOf(StoreUnavailableError);
    expect(own.message).toBe("unknown operator: $foo");
    expect(answers[3]).toEqual({ ok: true });
  });
});
