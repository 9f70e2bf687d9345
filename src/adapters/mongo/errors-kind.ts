import {
  MongoBulkWriteError,
  MongoNetworkTimeoutError,
  MongoOperationTimeoutError,
  MongoServerError,
} from "mongodb";
import type { StoreFailureKind } from "../../app/ports/store.ts";

// What a failed MongoDB operation was (ADR 10, "Errors named for what they are"). Told apart because
// each calls for something else: a lost connection waits for the database; a timeout or a too-large
// request may pass when made smaller; a refusal is about the statement and passes only without it.

const TIME_LIMIT_CODES = new Set([50, 262]); // MaxTimeMSExpired, ExceededTimeLimit
const TOO_LARGE_CODES = new Set([10334, 17419, 17420, 10287]); // BSONObjectTooLarge and updates grown past it
const TOO_LARGE_TEXT =
  /\btoo large\b|larger than the maximum|exceeds (?:the )?maximum|BSONObjectTooLarge|message length/i;

/** The errors a failure wraps: a bulk write keeps the command's own failure as its errorResponse. */
function* chain(e: unknown): Generator<Error> {
  for (let depth = 0; depth < 4 && e instanceof Error; depth++) {
    yield e;
    const wrapped: unknown = (e as { errorResponse?: unknown }).errorResponse;
    if (e instanceof MongoBulkWriteError && wrapped instanceof Error && wrapped !== e) yield* chain(wrapped);
    e = e.cause === e ? undefined : e.cause;
  }
}

/**
 * True when the server did not answer within the time limit: the socket timeout (30 s), the
 * operation's own limit, or the server's time limit on the statement. Not a lost connection: the
 * server may well be working on it still.
 */
export function isTimeout(e: unknown): boolean {
  for (const x of chain(e)) {
    // A connection that timed out before its handshake never reached the server: that is unreachable.
    if (x instanceof MongoNetworkTimeoutError && !(x as { beforeHandshake?: boolean }).beforeHandshake)
      return true;
    if (x instanceof MongoOperationTimeoutError) return true;
    if (x instanceof MongoServerError && typeof x.code === "number" && TIME_LIMIT_CODES.has(x.code))
      return true;
  }
  return false;
}

/** True when the server (or the driver, before sending) refused the request for its size. */
export function isTooLarge(e: unknown): boolean {
  for (const x of chain(e)) {
    if (x instanceof MongoServerError && typeof x.code === "number" && TOO_LARGE_CODES.has(x.code))
      return true;
    if (/^(Mongo|BSON)/.test(x.name) && TOO_LARGE_TEXT.test(x.message)) return true;
    if (x instanceof MongoBulkWriteError) {
      const errors = (Array.isArray(x.writeErrors) ? x.writeErrors : [x.writeErrors]).filter(Boolean);
      if (errors.some((w) => TOO_LARGE_CODES.has(w.code) || TOO_LARGE_TEXT.test(w.errmsg ?? ""))) return true;
    }
  }
  return false;
}

/**
 * The kind of a failure already known to be a store's (see errors.ts `translate`): timeout first (a
 * timeout is a network error to the driver, but not a lost connection), then unavailable, then the
 * answers about the request. Null for an error that is not the store's (a bug in Herald).
 */
export function kindOf(
  e: unknown,
  is: { unavailable(e: unknown): boolean; busy(e: unknown): boolean },
): StoreFailureKind | null {
  if (is.busy(e)) return "busy";
  if (isTimeout(e)) return "timeout";
  if (is.unavailable(e)) return "unreachable";
  if (isTooLarge(e)) return "too-large";
  if (e instanceof MongoServerError) return "refused"; // a bulk write error is one too
  return null;
}
