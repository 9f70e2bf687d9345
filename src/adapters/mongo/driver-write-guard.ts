import { createRequire } from "node:module";
import { MongoClient, MongoNetworkError } from "mongodb";

/**
 * A fix for a hang in the MongoDB Node.js driver (7.8 and 7.9 alike; docs/adr/0010-database-outages.md).
 *
 * The driver writes a command with `socket.write()` and, when that returns false, waits for the socket's
 * `drain` event (or an `error`). A socket whose peer closed it is *destroyed* a moment before it emits
 * `close`, and the driver only learns that a connection is gone from `close`. A command written in that
 * moment goes to a destroyed socket: `write()` returns false and emits nothing, so `drain` never comes,
 * the later `close` does not end the wait (the driver is not reading yet), and the command never
 * settles. When the database process stops, the peer closes every connection at once and the driver
 * fails the operations on them while the other sockets' `close` events are still queued; each failure
 * asks the server monitor for an immediate check, which can go out on the monitor's own connection in
 * exactly that moment. Then the monitor's check never ends, it never checks again, the server stays
 * "unknown", the pool stays paused, and every operation of this client fails server selection forever,
 * while any new client connects at once.
 *
 * The guard makes the wait end when the connection closes: a write fails with the connection's own
 * network error, as a write on a closed connection does anyway, and the driver's usual recovery follows.
 * It patches the driver's `Connection.prototype.writeCommand`, an internal method, so it checks that the
 * method is there and answers "unavailable" (the caller logs it) when a driver upgrade has moved it.
 */
export type WriteGuard = "guarded" | "unavailable";

/** What the guard needs of a driver connection: an event emitter that says `close`, and its state. */
export interface GuardedConnection {
  readonly closed: boolean;
  readonly error?: unknown;
  readonly id?: unknown;
  readonly address?: unknown;
  once(event: "close", listener: () => void): unknown;
  off(event: "close", listener: () => void): unknown;
}

/**
 * Runs `write` on `connection`, but settles as soon as the connection closes: rejects with the
 * connection's error when it closes first (or is closed already), and otherwise as `write` settles.
 */
export function writeUntilClosed(connection: GuardedConnection, write: () => Promise<void>): Promise<void> {
  const closedError = () =>
    connection.error instanceof Error
      ? connection.error
      : new MongoNetworkError(`connection ${String(connection.id)} to ${String(connection.address)} closed`);
  if (connection.closed) return Promise.reject(closedError());
  return new Promise<void>((resolve, reject) => {
    const onClose = () => reject(closedError());
    connection.once("close", onClose);
    write().then(
      () => {
        connection.off("close", onClose);
        resolve();
      },
      (e: unknown) => {
        connection.off("close", onClose);
        reject(e);
      },
    );
  });
}

const GUARDED = Symbol.for("herald.mongodb.writeGuard");

type WriteCommand = (this: GuardedConnection, ...args: unknown[]) => Promise<void>;

/** Installs the guard into the driver once per process; idempotent. */
export function guardDriverWrites(): WriteGuard {
  const require = createRequire(import.meta.url);
  let proto: Record<string | symbol, unknown> | undefined;
  try {
    // The internal module must belong to the very driver instance this process uses.
    if ((require("mongodb") as { MongoClient?: unknown }).MongoClient !== MongoClient) return "unavailable";
    const internal = require("mongodb/lib/cmap/connection.js") as {
      Connection?: { prototype?: Record<string | symbol, unknown> };
    };
    proto = internal.Connection?.prototype;
  } catch {
    return "unavailable";
  }
  if (!proto) return "unavailable";
  if (proto[GUARDED] === true) return "guarded";
  const original = proto.writeCommand;
  if (typeof original !== "function") return "unavailable";
  const write = original as WriteCommand;
  const guarded: WriteCommand = function (this: GuardedConnection, ...args: unknown[]) {
    return writeUntilClosed(this, () => write.apply(this, args));
  };
  proto.writeCommand = guarded;
  proto[GUARDED] = true;
  return "guarded";
}
