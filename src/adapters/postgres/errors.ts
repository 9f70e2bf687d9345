import {
  answerOf,
  type StoreFailureKind,
  StoreUnavailableError,
  withFailure,
} from "../../app/ports/store.ts";
import type { StallWatch } from "../stall-watch.ts";

// What a failed statement means for the caller: the database could not be reached, restarted, is
// starting, or refused more connections (503, try again: docs/adr/0010-database-outages.md), or the
// statement itself was wrong (a bug, 500). SQLSTATE classes from PostgreSQL's errcodes table.

/** SQLSTATE codes and classes that say "not now", never "not this request". */
const UNAVAILABLE_STATES = new Set([
  "57P01", // admin_shutdown: a fast shutdown or pg_terminate_backend
  "57P02", // crash_shutdown: another backend crashed, this one is being reset
  "57P03", // cannot_connect_now: starting up, shutting down, or in recovery
  "57P04", // database_dropped
  "57P05", // idle_session_timeout: the server ended an idle session
  "25P03", // idle_in_transaction_session_timeout: the server ended the session
  // query_canceled: the 30 s statement_timeout (connection.ts) ran out, which is how a server that hangs
  // answers (ADR 18), or an operator's pg_cancel_backend; neither is about the statement
  "57014",
  "53300", // too_many_connections
  "53400", // configuration_limit_exceeded
  "25006", // read_only_sql_transaction: a standby, mid failover
  "40001", // serialization_failure
  "40P01", // deadlock_detected
  "55P03", // lock_not_available
]);
const UNAVAILABLE_CLASSES = ["08", "53", "58"]; // connection exception, insufficient resources, system error

// The driver's own connection errors (postgres.js) and socket errors it lets through.
const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTCONN",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** True for errors that say the database cannot serve now, as opposed to a bad statement or a bug. */
export function isUnavailable(e: unknown, depth = 0): boolean {
  if (e instanceof StoreUnavailableError) return true;
  if (!(e instanceof Error) || depth > 3) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string") {
    if (CONNECTION_CODES.has(code) || UNAVAILABLE_STATES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && UNAVAILABLE_CLASSES.includes(code.slice(0, 2))) return true;
  }
  // Deno and Bun report a refused or reset socket by name rather than by code.
  if (/^(ConnectionRefused|ConnectionReset|ConnectionAborted|BrokenPipe|TimedOut|NotConnected)$/.test(e.name))
    return true;
  return e.cause !== undefined && e.cause !== e && isUnavailable(e.cause, depth + 1);
}

// Of those, the ones that are not a lost connection (ADR 10, "Errors named for what they are").
const TIMEOUT_STATES = new Set(["57014"]); // the statement_timeout ran out (or an operator cancelled it)
const BUSY_STATES = new Set(["53300", "53400", "40001", "40P01", "55P03"]);
const BUSY_CLASSES = ["53"]; // insufficient resources: out of connections, memory or disk
const TOO_LARGE_CLASSES = ["54"]; // program limit exceeded: a statement too large or complex
// postgres.js refuses before sending a statement with more parameters than the protocol carries.
const TOO_LARGE_CODES = new Set(["MAX_PARAMETERS_EXCEEDED"]);

/** The kind of a store failure, or null for an error that is not the database's (a bug in Herald). */
export function kindOf(e: unknown, depth = 0): StoreFailureKind | null {
  if (e instanceof StoreUnavailableError) return e.kind;
  if (!(e instanceof Error) || depth > 3) return null;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string") {
    const sqlstate = /^[0-9A-Z]{5}$/.test(code);
    if (TIMEOUT_STATES.has(code)) return "timeout";
    if (BUSY_STATES.has(code) || (sqlstate && BUSY_CLASSES.includes(code.slice(0, 2)))) return "busy";
    if (isUnavailable(e)) return "unreachable";
    if (TOO_LARGE_CODES.has(code) || (sqlstate && TOO_LARGE_CLASSES.includes(code.slice(0, 2))))
      return "too-large";
    if (sqlstate) return "refused";
  }
  if (isUnavailable(e)) return "unreachable";
  return e.cause !== undefined && e.cause !== e ? kindOf(e.cause, depth + 1) : null;
}

/**
 * True when a connection was lost or never made (as opposed to a statement the server refused): what
 * leaves postgres.js's connections in need of renewal once the database answers again (ADR 10).
 */
export function isConnectionLost(e: unknown, depth = 0): boolean {
  if (!(e instanceof Error) || depth > 3) return false;
  if (e instanceof StoreUnavailableError && e.cause === undefined) return true; // a deadline of Herald's
  const code = (e as { code?: unknown }).code;
  if (
    typeof code === "string" &&
    (CONNECTION_CODES.has(code) || code.startsWith("08") || code.startsWith("57P"))
  )
    return true;
  return e.cause !== undefined && e.cause !== e && isConnectionLost(e.cause, depth + 1);
}

/**
 * The error to rethrow: StoreUnavailableError, named for what it was (unreachable, timeout, busy), for a
 * database that cannot serve now; the error itself otherwise, marked refused or too large when the server
 * answered so about the statement (storeFailureOf reads it).
 */
export function translate(e: unknown): unknown {
  if (e instanceof StoreUnavailableError) return e;
  const kind = kindOf(e);
  if (kind === null) return e;
  if (kind === "refused" || kind === "too-large") return withFailure(e, { kind, answer: answerOf(e) });
  return new StoreUnavailableError(undefined, { cause: e, kind, answer: answerOf(e) });
}

/** True when a statement failed only because a row with that key exists already. */
export function isUniqueViolation(e: unknown): boolean {
  return (e as { code?: unknown })?.code === "23505";
}

/**
 * Wraps every method of a repository so outages surface as StoreUnavailableError (the edge answers 503),
 * and, given a stall watch, so no call waits on a database that has stopped answering (stall.ts).
 */
export function guarded<T extends object>(target: T, watch?: StallWatch): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value: unknown = Reflect.get(obj, prop, receiver);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        try {
          const call = () => value.apply(obj, args) as Promise<unknown>;
          return await (watch ? watch.run(call) : call());
        } catch (e) {
          throw translate(e);
        }
      };
    },
  });
}
