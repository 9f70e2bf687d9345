import { createServer, type Server, type Socket } from "node:net";
import type { PGlite } from "@electric-sql/pglite";
import {
  CANCEL_REQUEST,
  cstring,
  errorResponse,
  GSSENC_REQUEST,
  MAX_MESSAGE,
  message,
  noteStatements,
  ReadyTracker,
  SSL_REQUEST,
  TERMINATE,
  TURN_ENDS,
  withoutCopyIn,
} from "./embedded-wire.ts";

/**
 * Serves one PGlite database to several PostgreSQL wire-protocol connections on loopback.
 *
 * PGlite is one backend session. `@electric-sql/pglite-socket`'s server queues each protocol *message*
 * and keeps a connection's turn only while a transaction block is open, so the Parse/Bind/Execute/Sync
 * of two connections interleave: one binds or executes the other's unnamed statement or portal (wrong
 * rows or errors; electric-sql/pglite#1046, #977; reproduced here with postgres.js). This server hands the
 * backend to another connection only when the backend says it is idle: at a ReadyForQuery whose status
 * is 'I'. Until then (an extended-protocol batch up to its Sync, a transaction, a COPY) the connection
 * that started it keeps the backend and the others wait. docs/adr/0017-embedded-postgres.md.
 */
export interface EmbeddedServer {
  host: string;
  port: number;
  /** Stops accepting, closes every connection and waits for the backend to be left idle. */
  close(): Promise<void>;
  /** Why PGlite failed, once it has (every connection then gets an error); null while it works. */
  readonly failure: string | null;
}

export interface EmbeddedServerOptions {
  host?: string;
  /** Connections beyond this are refused with SQLSTATE 53300, as a server at max_connections does. */
  maxConnections?: number;
}

/** One client connection: its socket, what it sent that is not yet a whole turn, its named statements. */
interface Client {
  socket: Socket;
  started: boolean;
  /** Bytes received and not yet parsed, kept as chunks until the message they start is whole. */
  input: Buffer[];
  inputLength: number;
  /** Length of the message the input starts with, once its header is in (0 until then). */
  needed: number;
  turn: Buffer[];
  statements: Set<string>;
  gone: boolean;
}

/** Work for the backend: a client's turn (its messages), or the clean-up after a client left. */
interface Job {
  client: Client;
  messages: Buffer | null;
}

export async function serveEmbedded(
  db: PGlite,
  options: EmbeddedServerOptions = {},
): Promise<EmbeddedServer> {
  const host = options.host ?? "127.0.0.1";
  const maxConnections = options.maxConnections ?? 100;
  const clients = new Set<Client>();
  const refused = new Set<Socket>();
  const jobs: Job[] = [];
  /** The client whose batch or transaction is open in the backend; only its jobs may run. */
  let owner: Client | null = null;
  let running = false;
  let drained: (() => void) | null = null;
  /** Set when PGlite itself failed: nothing can run any more. */
  let failure: string | null = null;
  const failedText = () => `the embedded PostgreSQL failed (${failure}); restart Herald`;

  const pump = async () => {
    if (running) return;
    running = true;
    try {
      for (;;) {
        const index = owner ? jobs.findIndex((j) => j.client === owner) : 0;
        const job = index >= 0 ? jobs.splice(index, 1)[0] : undefined;
        if (!job) break;
        let idle = await run(job);
        // A client that left while its turn ran leaves no job to end what it opened: end it now.
        if (!idle && job.client.gone) idle = await cleanUp(job.client);
        owner = idle ? null : job.client;
      }
    } finally {
      running = false;
      drained?.();
    }
  };

  /** Runs one job; answers whether the backend is idle afterwards. */
  const run = async (job: Job): Promise<boolean> => {
    const { client } = job;
    if (job.messages === null) return cleanUp(client);
    const ready = new ReadyTracker();
    try {
      await db.runExclusive(() =>
        db.execProtocolRawStream(job.messages as Buffer, {
          onRawData: (data) => {
            ready.feed(data);
            // A copy: `data` may be a view of PGlite's memory, reused before the socket has written it.
            if (!client.gone && client.socket.writable) client.socket.write(Buffer.from(data));
          },
        }),
      );
    } catch (e) {
      // PGlite itself failed (an SQL error is an ErrorResponse, not a throw). Seen: its backend exits, and
      // every later call hangs. Fail every connection now, and each new one, so clients see an error
      // instead of waiting forever.
      failure = String((e as Error)?.message ?? e);
      jobs.length = 0;
      for (const c of clients) {
        c.socket.end(errorResponse("XX000", failedText()));
        setTimeout(() => c.socket.destroy(), 1_000).unref();
      }
      return true;
    }
    return ready.idle;
  };

  /**
   * Leaves the backend as a departed client should: a COPY from it failed and its batch ended (CopyFail and
   * Sync; PostgreSQL ignores each where there is nothing to end), its transaction rolled back, its named
   * statements freed (they would otherwise pile up in the one session).
   */
  const cleanUp = async (client: Client): Promise<boolean> => {
    if (failure !== null) return true;
    try {
      await db.runExclusive(async () => {
        await db.execProtocolRaw(
          Buffer.concat([message("f", cstring("client gone")), message("S", Buffer.alloc(0))]),
        );
        if (db.isInTransaction()) await db.execProtocolRaw(message("Q", cstring("ROLLBACK")));
        if (client.statements.size > 0) {
          const closes = [...client.statements].map((name) =>
            message("C", Buffer.concat([Buffer.from("S"), cstring(name)])),
          );
          await db.execProtocolRaw(Buffer.concat([...closes, message("S", Buffer.alloc(0))]));
        }
      });
    } catch {
      // The database is closing or broken; nothing is left to reset.
    }
    client.statements.clear();
    return true;
  };

  const enqueue = (job: Job) => {
    if (failure !== null) return;
    jobs.push(job);
    void pump();
  };

  const onData = (client: Client, data: Buffer) => {
    client.input.push(data);
    client.inputLength += data.length;
    // A large message comes in many reads: join them once it is whole, not on every read.
    if (client.inputLength < client.needed) return;
    let input = client.input.length === 1 ? data : Buffer.concat(client.input);
    const keep = () => {
      client.input = input.length > 0 ? [input] : [];
      client.inputLength = input.length;
    };
    for (;;) {
      client.needed = 0;
      if (!client.started) {
        if (input.length < 8) return keep();
        const length = input.readInt32BE(0);
        if (length < 8 || length > MAX_MESSAGE) return void client.socket.destroy();
        client.needed = length;
        if (input.length < length) return keep();
        const code = input.readInt32BE(4);
        const startup = input.subarray(0, length);
        input = input.subarray(length);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          client.socket.write("N"); // no encryption on loopback; the client goes on in the clear
          continue;
        }
        if (code === CANCEL_REQUEST) {
          // One backend, one statement at a time: there is nothing to signal.
          client.socket.end();
          return;
        }
        client.started = true;
        enqueue({ client, messages: startup });
        continue;
      }
      if (input.length < 5) return keep();
      const length = 1 + input.readInt32BE(1);
      if (length < 5 || length > MAX_MESSAGE) return void client.socket.destroy();
      client.needed = length;
      if (input.length < length) return keep();
      const type = input[0] as number;
      const msg = input.subarray(0, length);
      input = input.subarray(length);
      if (type === TERMINATE) {
        client.socket.end();
        return;
      }
      noteStatements(client.statements, type, msg);
      client.turn.push(withoutCopyIn(type, msg));
      if (TURN_ENDS.has(type)) {
        const messages = Buffer.concat(client.turn);
        client.turn = [];
        enqueue({ client, messages });
      }
    }
  };

  const onGone = (client: Client) => {
    if (client.gone) return;
    client.gone = true;
    clients.delete(client);
    for (let i = jobs.length - 1; i >= 0; i--) if (jobs[i]?.client === client) jobs.splice(i, 1);
    if (client.started) enqueue({ client, messages: null });
    else drained?.();
  };

  const server: Server = createServer({ noDelay: true }, (socket) => {
    if (failure !== null || clients.size >= maxConnections) {
      // Told why, then let go: a client that keeps its end open after the error (postgres.js does) would
      // otherwise hold the socket, and close(), forever.
      refused.add(socket);
      socket.on("close", () => refused.delete(socket));
      socket.on("error", () => socket.destroy());
      socket.resume();
      socket.end(
        failure !== null
          ? errorResponse("XX000", failedText())
          : errorResponse("53300", "sorry, too many clients already"),
      );
      setTimeout(() => socket.destroy(), 1_000).unref();
      return;
    }
    const client: Client = {
      socket,
      started: false,
      input: [],
      inputLength: 0,
      needed: 0,
      turn: [],
      statements: new Set(),
      gone: false,
    };
    clients.add(client);
    socket.on("data", (data) => onData(client, data));
    socket.on("error", () => socket.destroy());
    socket.on("close", () => onGone(client));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the embedded server has no TCP port");

  return {
    host,
    port: address.port,
    get failure() {
      return failure;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const client of clients) client.socket.destroy();
      for (const socket of refused) socket.destroy();
      await closed;
      // Each client's 'close' queues its clean-up: wait until all have left and the backend is idle.
      await new Promise<void>((resolve) => {
        drained = () => {
          if (clients.size === 0 && !running && jobs.length === 0 && owner === null) resolve();
        };
        drained();
      });
    },
  };
}
