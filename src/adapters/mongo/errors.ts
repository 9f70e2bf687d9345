import {
  MongoBulkWriteError,
  MongoClientClosedError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerClosedError,
  MongoServerError,
  MongoStalePrimaryError,
  MongoSystemError,
  MongoTopologyClosedError,
} from "mongodb";
import { answerOf, StoreUnavailableError, withFailure } from "../../app/ports/store.ts";
import type { Answer } from "../natural-batch.ts";
import type { StallWatch } from "../stall-watch.ts";
import { kindOf } from "./errors-kind.ts";

const DUPLICATE_KEY = 11000;

// Server answers that mean "no usable primary right now" rather than "your request is wrong".
const UNAVAILABLE_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

const UNAVAILABLE_CLASSES = [
  MongoNetworkError, // includes timeouts and cleared pools
  MongoSystemError, // includes server selection
  MongoTopologyClosedError,
  MongoNotConnectedError,
  MongoServerClosedError,
  MongoClientClosedError,
  MongoOperationTimeoutError,
  MongoStalePrimaryError,
];

// Socket errors the driver sometimes lets through unwrapped (e.g. "write ECONNRESET" from a write on a
// connection the peer just reset), and driver errors not exported as classes.
const SOCKET_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTCONN",
]);
const UNAVAILABLE_NAMES = new Set(["MongoWaitQueueTimeoutError", "MongoPoolClearedError"]);

/**
 * What a server backed by PostgreSQL (FerretDB 2 on DocumentDB, FerretDB v1) answers, as a server error
 * with a message rather than a code, when PostgreSQL under it cannot serve now: a backend that crashed or
 * was terminated, a server restarting, starting up or in recovery, a refused or reset connection. Each is
 * PostgreSQL's own wording (or Go's for a dropped socket), matched whole, so that no answer about the
 * request itself (a bad filter, a duplicate, a document too large) can be taken for one.
 */
const UNAVAILABLE_TEXTS = [
  /\bunexpected EOF\b/,
  /\bthe database system is (?:in recovery mode|starting up|shutting down|not yet accepting connections|not accepting connections)\b/,
  /\bterminating connection due to (?:administrator command|crash of another server process|idle-session timeout|conflict with recovery|unexpected postmaster exit)\b/,
  /\bserver closed the connection unexpectedly\b/,
  /\bsorry, too many clients already\b/,
  /\bremaining connection slots are reserved\b/,
  /\bconnection reset by peer\b/,
  /\bbroken pipe\b/,
  /\bconnect(?:ion)?: connection refused\b/,
  /\bconn closed\b/,
  /\bfailed to connect to `/,
  /\bSQLSTATE (?:57P0[1-5]|53300|08\w{3})\b/,
];

/** True for a server's answer whose text says the PostgreSQL under it cannot serve now. */
export function isUnavailableText(message: unknown): boolean {
  return typeof message === "string" && UNAVAILABLE_TEXTS.some((re) => re.test(message));
}

/** True for errors that say the database cannot be reached, as opposed to a bad request or a bug. */
export function isUnavailable(e: unknown, depth = 0): boolean {
  if (UNAVAILABLE_CLASSES.some((cls) => e instanceof cls)) return true;
  if (!(e instanceof Error) || depth > 3) return false;
  if (UNAVAILABLE_NAMES.has(e.name)) return true;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string" && SOCKET_CODES.has(code)) return true;
  // A bulk write that failed on the network wraps the network error (as its errorResponse), with no
  // write errors of its own.
  if (e instanceof MongoBulkWriteError) {
    const wrapped: unknown = (e as { errorResponse?: unknown }).errorResponse;
    if (wrapped instanceof Error && wrapped !== e && isUnavailable(wrapped, depth + 1)) return true;
  }
  if (e instanceof MongoServerError && typeof e.code === "number" && UNAVAILABLE_CODES.has(e.code))
    return true;
  if (e instanceof MongoBulkWriteError) {
    // Refused statements: unavailable when at least one was refused for the database's state and the
    // others only as duplicates (safe to repeat); any other refusal is about a statement itself.
    const errors = (Array.isArray(e.writeErrors) ? e.writeErrors : [e.writeErrors]).filter(Boolean);
    if (errors.length === 0 && isUnavailableText(e.message)) return true; // the whole command failed
    if (
      errors.some((w) => isUnavailableWrite(w.code, w.errmsg)) &&
      errors.every((w) => isUnavailableWrite(w.code, w.errmsg) || isDuplicateAnswer(w.code, w.errmsg))
    )
      return true;
  } else if (
    e instanceof MongoServerError &&
    !isDuplicateAnswer(e.code, e.message) &&
    isUnavailableText(e.message)
  ) {
    // Duplicate answers are about the request, whatever else their text says.
    return true;
  }
  return e.cause !== undefined && e.cause !== e && isUnavailable(e.cause, depth + 1);
}

/**
 * True for a write the server refused because its storage was momentarily locked (FerretDB's SQLite
 * backend under concurrent writers: SQLITE_BUSY). The statement did not run, so it can be sent again.
 */
export function isBusy(e: unknown): boolean {
  return e instanceof MongoServerError && /SQLITE_BUSY|database is locked/i.test(e.message);
}

/**
 * The error to rethrow: StoreUnavailableError, named for what it was (unreachable, timeout, busy), for
 * a store that cannot serve now; the error itself otherwise, marked refused or too large when the server
 * answered so about the request (storeFailureOf reads it).
 */
export function translate(e: unknown): unknown {
  if (e instanceof StoreUnavailableError) return e;
  const kind = kindOf(e, { unavailable: isUnavailable, busy: isBusy });
  if (kind === null) return e;
  if (kind === "refused" || kind === "too-large") return withFailure(e, { kind, answer: answerOf(e) });
  return new StoreUnavailableError(undefined, { cause: e, kind, answer: answerOf(e) });
}

/** Waits before each retry of a busy store, in milliseconds. */
export const BUSY_RETRY_DELAYS_MS = [10, 25, 60, 150, 400];

/**
 * Wraps every method of a repository so driver outages surface as StoreUnavailableError, and a busy
 * store is tried again a few times first. Every repository method is safe to repeat (duplicate ids are
 * ignored, updates are guarded by state and lease owner), so repeating a whole method is too. Given a
 * stall watch, no call waits on a database that answers nothing (stall-watch.ts).
 */
export function guarded<T extends object>(target: T, watch?: StallWatch): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value: unknown = Reflect.get(obj, prop, receiver);
      if (typeof value !== "function") return value;
      const call = async (...args: unknown[]) => {
        for (let attempt = 0; ; attempt++) {
          try {
            return await value.apply(obj, args);
          } catch (e) {
            const delay = BUSY_RETRY_DELAYS_MS[attempt];
            if (!isBusy(e) || delay === undefined) throw translate(e);
            await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random())));
          }
        }
      };
      return watch ? (...args: unknown[]) => watch.run(() => call(...args)) : call;
    },
  });
}

/**
 * True for a server's "that _id (or unique key) exists already", in either dialect: MongoDB and
 * FerretDB v1 answer code 11000; FerretDB 2 answers an upsert that collides with code 1 and
 * PostgreSQL's "duplicate key value violates unique constraint".
 */
function isDuplicateAnswer(code: unknown, message: unknown): boolean {
  if (code === DUPLICATE_KEY) return true;
  return (
    code === 1 &&
    typeof message === "string" &&
    /duplicate key value violates unique constraint/i.test(message)
  );
}

/** True for one refused write of a bulk write whose cause is the database's state, not the statement. */
function isUnavailableWrite(code: unknown, message: unknown): boolean {
  return !isDuplicateAnswer(code, message) && isUnavailableText(message);
}

/** True when a single write failed only because the _id (or a unique key) exists already. */
export function isDuplicateKey(e: unknown): boolean {
  return e instanceof MongoServerError && isDuplicateAnswer(e.code, e.message);
}

/**
 * Runs an unordered bulk insert and answers the positions refused as duplicates (the idempotent case);
 * any other failure is thrown.
 */
export async function insertIgnoringDuplicates(insert: () => Promise<unknown>): Promise<Set<number>> {
  try {
    await insert();
    return new Set();
  } catch (e) {
    const errors = refusedWrites(e);
    if (!errors.every((w) => isDuplicateAnswer(w.code, w.errmsg))) throw e;
    return new Set(errors.map((w) => w.index));
  }
}

/**
 * The positions an unordered bulk write refused one by one; rethrows a failure of the whole command
 * (not a bulk write error, a write concern error, or none refused).
 */
function refusedWrites(e: unknown) {
  if (!(e instanceof MongoBulkWriteError) || e.result.getWriteConcernError()) throw e;
  const errors = Array.isArray(e.writeErrors) ? e.writeErrors : [e.writeErrors];
  if (errors.length === 0) throw e;
  return errors;
}

/**
 * Runs an unordered bulk insert of `count` documents and answers each position: `true` inserted,
 * `false` refused as a duplicate (the idempotent case), or that position's own write error. A failure
 * of the whole command (the network, a write concern) is thrown.
 */
export async function insertAnswers(
  insert: () => Promise<unknown>,
  count: number,
): Promise<Answer<boolean>[]> {
  const answers: Answer<boolean>[] = Array.from({ length: count }, () => ({ ok: true }));
  try {
    await insert();
  } catch (e) {
    for (const w of refusedWrites(e)) {
      const refused = Object.assign(new Error(w.errmsg ?? "write refused"), { code: w.code });
      answers[w.index] = isDuplicateAnswer(w.code, w.errmsg)
        ? { ok: false }
        : // Refused for the database's state (a crashed backend): the caller's publish answers 503.
          isUnavailableWrite(w.code, w.errmsg)
          ? { error: new StoreUnavailableError(undefined, { cause: refused }) }
          : { error: refused };
    }
  }
  return answers;
}
