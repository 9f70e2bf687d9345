import {
  MongoBulkWriteError,
  MongoInvalidArgumentError,
  MongoNetworkError,
  MongoNetworkTimeoutError,
  MongoServerError,
  MongoServerSelectionError,
  type WriteError,
} from "mongodb";
import { describe, expect, it } from "vitest";
import { translate } from "../../../src/adapters/mongo/errors.ts";
import { StoreUnavailableError, storeFailureOf } from "../../../src/app/ports/store.ts";

// Issue 31: a bulk write of results that ran past the 30 s socket timeout on FerretDB v1 was logged as
// "the database is unreachable" while the database answered everything else. Each kind of failure is
// told apart, with the server's (or driver's) own answer; only a lost connection is "unreachable".

const bulkWrapping = (inner: Error) => {
  const e = new MongoBulkWriteError(
    { message: inner.message, code: 0, writeErrors: [] as unknown as WriteError[] },
    {
      getWriteConcernError: () => undefined,
    } as unknown as ConstructorParameters<typeof MongoBulkWriteError>[1],
  );
  Object.assign(e, { errorResponse: inner });
  return e;
};

const kind = (e: unknown) => storeFailureOf(translate(e));

describe("MongoDB failures named for what they are", () => {
  it("a socket timeout, bare or inside a bulk write, is a timeout (503), not unreachable", () => {
    const timeout = new MongoNetworkTimeoutError("connection 6 to 127.0.0.1:11483 timed out");
    for (const e of [timeout, bulkWrapping(timeout)]) {
      const t = translate(e);
      expect(t).toBeInstanceOf(StoreUnavailableError);
      expect((t as Error).message).toBe("the database did not answer in time");
      expect(storeFailureOf(t)).toEqual({
        kind: "timeout",
        answer: "connection 6 to 127.0.0.1:11483 timed out",
      });
    }
    expect(kind(new MongoServerError({ message: "operation exceeded time limit", code: 50 })).kind).toBe(
      "timeout",
    );
  });

  it("a lost connection or no server to select is unreachable", () => {
    expect(kind(new MongoNetworkError("connection 3 to 127.0.0.1:27017 closed"))).toEqual({
      kind: "unreachable",
      answer: "connection 3 to 127.0.0.1:27017 closed",
    });
    const selection = new MongoServerSelectionError("connect ECONNREFUSED 127.0.0.1:27017", {} as never);
    expect((translate(selection) as Error).message).toBe("the database is unreachable");
    expect(kind(Object.assign(new Error("write ECONNRESET"), { code: "ECONNRESET" })).kind).toBe(
      "unreachable",
    );
    // A connection that timed out before its handshake never reached the server.
    const connecting = Object.assign(new MongoNetworkTimeoutError("connect timed out"), {
      beforeHandshake: true,
    });
    expect(kind(connecting).kind).toBe("unreachable");
  });

  it("SQLite's lock (FerretDB) is busy", () => {
    expect(kind(new MongoServerError({ message: "SQLITE_BUSY: database is locked", code: 1 })).kind).toBe(
      "busy",
    );
  });

  it("a request too large is too-large and stays the driver's error (not 503)", () => {
    const server = new MongoServerError({ message: "BSONObj size: 17000000 is invalid", code: 10334 });
    expect(translate(server)).toBe(server);
    expect(kind(server)).toEqual({ kind: "too-large", answer: "BSONObj size: 17000000 is invalid" });
    const driver = new MongoInvalidArgumentError("Document is larger than the maximum size 16777216");
    expect(kind(driver).kind).toBe("too-large");
  });

  it("a write the server refused for what it is is refused, with the server's answer", () => {
    const e = new MongoServerError({ message: "Document failed validation", code: 121 });
    expect(translate(e)).toBe(e);
    expect(kind(e)).toEqual({ kind: "refused", answer: "Document failed validation" });
  });

  it("an error that is not the database's is other, and credentials in an answer are taken out", () => {
    expect(kind(new TypeError("x is undefined")).kind).toBe("other");
    const e = new MongoNetworkError("could not reach mongodb://herald:s3cret@db.internal:27017/");
    expect(kind(e).answer).toBe("could not reach mongodb://[redacted]@db.internal:27017/");
  });
});
