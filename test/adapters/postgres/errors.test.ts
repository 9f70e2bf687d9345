import { describe, expect, it } from "vitest";
import { isUnavailable, translate } from "../../../src/adapters/postgres/errors.ts";
import { StoreUnavailableError } from "../../../src/app/ports/store.ts";

/** An error as postgres.js raises it: the server's SQLSTATE (or the driver's own code) in `code`. */
const pgError = (code: string, message = "error") => Object.assign(new Error(message), { code });

describe("classifying PostgreSQL errors: the database cannot serve now (503) or the statement is wrong", () => {
  it.each([
    ["57P01", "terminating connection due to administrator command (pg_terminate_backend, a fast stop)"],
    ["57P02", "terminating connection due to crash of another server process"],
    ["57P03", "the database system is in recovery mode / starting up / shutting down"],
    ["57P05", "terminating connection due to idle-session timeout"],
    ["57014", "canceling statement due to statement timeout (a server that hangs, ADR 18)"],
    ["53300", "sorry, too many clients already"],
    ["08006", "connection failure"],
    ["08P01", "protocol violation"],
    ["58030", "io_error"],
    ["40001", "serialization failure"],
    ["CONNECTION_CLOSED", "the connection closed while a statement was in flight (a killed backend)"],
    ["CONNECTION_ENDED", "the pool ended"],
    ["CONNECTION_DESTROYED", "the connection was destroyed"],
    ["CONNECT_TIMEOUT", "connecting took too long"],
    ["ECONNRESET", "the socket was reset"],
    ["ECONNREFUSED", "nothing listens (the server restarting)"],
  ])("%s (%s) is unavailable", (code) => {
    const e = pgError(code);
    expect(isUnavailable(e)).toBe(true);
    const t = translate(e);
    expect(t).toBeInstanceOf(StoreUnavailableError);
    expect((t as Error).cause).toBe(e);
  });

  it.each([
    ["23505", "unique_violation"],
    ["23502", "not_null_violation"],
    ["22P02", "invalid_text_representation"],
    ["42601", "syntax_error"],
    ["42P01", "undefined_table"],
    ["XX000", "internal_error"],
    ["UNDEFINED_VALUE", "a driver error about the call"],
  ])("%s (%s) is not", (code) => {
    const e = pgError(code);
    expect(isUnavailable(e)).toBe(false);
    expect(translate(e)).toBe(e);
  });

  it("looks through causes, and names Deno and Bun give a dropped socket", () => {
    expect(isUnavailable(new Error("wrapped", { cause: pgError("57P01") }))).toBe(true);
    expect(isUnavailable(Object.assign(new Error("reset"), { name: "ConnectionReset" }))).toBe(true);
    expect(isUnavailable(new Error("the database system is in recovery mode"))).toBe(false); // no code: not ours to guess
  });
});
