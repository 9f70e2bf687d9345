import { describe, expect, it } from "vitest";
import { kindOf, translate } from "../../../src/adapters/postgres/errors.ts";
import { StoreUnavailableError, storeFailureOf } from "../../../src/app/ports/store.ts";

// Issue 31: each kind of failure is told apart, with the server's own answer; only a lost connection is
// "unreachable". Every 503 of before stays a 503 (errors.test.ts); only its name changes.

const pgError = (code: string, message = "error") => Object.assign(new Error(message), { code });

describe("PostgreSQL failures named for what they are", () => {
  it.each([
    ["57014", "timeout", "canceling statement due to statement timeout"],
    ["53300", "busy", "sorry, too many clients already"],
    ["40P01", "busy", "deadlock detected"],
    ["55P03", "busy", "could not obtain lock on row"],
    ["57P01", "unreachable", "terminating connection due to administrator command"],
    ["08006", "unreachable", "connection failure"],
    ["CONNECTION_CLOSED", "unreachable", "write CONNECTION_CLOSED 127.0.0.1:5432"],
    ["CONNECT_TIMEOUT", "unreachable", "write CONNECT_TIMEOUT 127.0.0.1:5432"],
  ])("%s is %s (503), with the server's answer", (code, expected, message) => {
    const t = translate(pgError(code, message));
    expect(t).toBeInstanceOf(StoreUnavailableError);
    expect(storeFailureOf(t)).toEqual({ kind: expected, answer: message });
    expect((t as Error).message).toBe(
      {
        timeout: "the database did not answer in time",
        busy: "the database is busy",
        unreachable: "the database is unreachable",
      }[expected],
    );
  });

  it.each([
    ["54000", "too-large", "total size of jsonb array elements exceeds the maximum"],
    ["MAX_PARAMETERS_EXCEEDED", "too-large", "Max number of parameters (65534) exceeded"],
    ["23505", "refused", 'duplicate key value violates unique constraint "deliveries_pkey"'],
    ["22P02", "refused", "invalid input syntax for type integer"],
  ])("%s is %s and stays the driver's error (not 503)", (code, expected, message) => {
    const e = pgError(code, message);
    expect(translate(e)).toBe(e);
    expect(kindOf(e)).toBe(expected);
    expect(storeFailureOf(translate(e))).toEqual({ kind: expected, answer: message });
  });

  it("an error that is not the database's is left alone", () => {
    const e = new TypeError("x is undefined");
    expect(kindOf(e)).toBeNull();
    expect(storeFailureOf(translate(e)).kind).toBe("other");
  });
});
