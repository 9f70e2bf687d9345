import { EventEmitter } from "node:events";
import { createRequire } from "node:module";
import { connect, createServer, type Server, type Socket } from "node:net";
import { MongoNetworkError } from "mongodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardDriverWrites, writeUntilClosed } from "../../../src/adapters/mongo/driver-write-guard.ts";

// ADR 0010's root cause: the driver's command write waits for `drain` on a socket that was destroyed
// (the peer closed it) before its `close` event, and waits forever. Here the real driver Connection, on a
// real socket destroyed just before the command: the state in which the server monitor hung for good.
const require = createRequire(import.meta.url);
type DriverConnection = {
  closed: boolean;
  command(ns: unknown, cmd: Record<string, unknown>, options: Record<string, unknown>): Promise<unknown>;
};
const { Connection } = require("mongodb/lib/cmap/connection.js") as {
  Connection: new (socket: Socket, options: Record<string, unknown>) => DriverConnection;
};
const { HostAddress, ns } = require("mongodb/lib/utils.js") as {
  HostAddress: { fromString(s: string): unknown };
  ns(s: string): unknown;
};

/** How a command on `socket` ends within `ms`, or "pending". */
async function outcome(p: Promise<unknown>, ms: number): Promise<string> {
  return Promise.race([
    p.then(
      () => "answered",
      (e: Error) => `${e.name}: ${e.message}`,
    ),
    new Promise<string>((r) => setTimeout(() => r("pending"), ms)),
  ]);
}

describe("the driver write guard (ADR 0010)", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    // Reads whatever comes and never answers: only the client side matters here.
    server = createServer((s) => s.on("data", () => {}));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const destroyedBeforeClose = async () => {
    const socket = connect(port, "127.0.0.1");
    await new Promise((r) => socket.once("connect", r));
    // A socket timeout does not help: a destroyed socket never fires it.
    const conn = new Connection(socket, {
      id: 1,
      generation: 0,
      hostAddress: HostAddress.fromString(`127.0.0.1:${port}`),
      socketTimeoutMS: 500,
    });
    socket.destroy();
    // The state of the race: destroyed, but the driver has not heard `close` yet.
    expect(socket.destroyed).toBe(true);
    expect(conn.closed).toBe(false);
    return conn;
  };

  it("fails a command written to a socket destroyed before its close event, instead of hanging", async () => {
    expect(guardDriverWrites()).toBe("guarded");
    const conn = await destroyedBeforeClose();
    const started = Date.now();
    const result = await outcome(conn.command(ns("admin.$cmd"), { ping: 1 }, {}), 5_000);
    expect(result).toMatch(/^MongoNetworkError: connection 1 to .* closed$/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("is installed once however often it is asked for", () => {
    expect(guardDriverWrites()).toBe("guarded");
    expect(guardDriverWrites()).toBe("guarded");
  });
});

describe("writeUntilClosed", () => {
  const fakeConnection = (closed = false) =>
    Object.assign(new EventEmitter(), { closed, error: undefined as unknown, id: 7, address: "db:27017" });

  it("settles as the write does while the connection stays open, and leaves no listener behind", async () => {
    const c = fakeConnection();
    await expect(writeUntilClosed(c, () => Promise.resolve())).resolves.toBeUndefined();
    await expect(writeUntilClosed(c, () => Promise.reject(new Error("bad")))).rejects.toThrow("bad");
    expect(c.listenerCount("close")).toBe(0);
  });

  it("rejects with the connection's error when it closes while the write waits", async () => {
    const c = fakeConnection();
    const p = writeUntilClosed(c, () => new Promise<void>(() => {}));
    const gone = new MongoNetworkError("connection 7 to db:27017 closed");
    c.error = gone;
    c.closed = true;
    c.emit("close");
    await expect(p).rejects.toBe(gone);
  });

  it("rejects at once, without writing, when the connection is closed already", async () => {
    const c = fakeConnection(true);
    let wrote = false;
    await expect(
      writeUntilClosed(c, async () => {
        wrote = true;
      }),
    ).rejects.toBeInstanceOf(MongoNetworkError);
    expect(wrote).toBe(false);
  });
});
