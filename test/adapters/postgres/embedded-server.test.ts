import { connect, type Socket } from "node:net";
import { PGlite, protocol } from "@electric-sql/pglite";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddedServer, serveEmbedded } from "../../../src/adapters/postgres/embedded-server.ts";

// The wire server in front of PGlite: one backend session shared by several connections, handed over
// only when the backend is idle (src/adapters/postgres/embedded-server.ts says why).
const wire = protocol.serialize;
let db: PGlite;
let server: EmbeddedServer;
let url: string;

beforeAll(async () => {
  db = await PGlite.create({ dataDir: "memory://" });
  server = await serveEmbedded(db, { maxConnections: 20 });
  url = `postgres://postgres@127.0.0.1:${server.port}/postgres`;
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});

/** A client that speaks the protocol message by message, to send what drivers send in one packet apart. */
interface Raw {
  send(...messages: Uint8Array[]): void;
  /** The backend's messages up to and including the next ReadyForQuery, as short strings. */
  untilReady(): Promise<string[]>;
  socket: Socket;
}

async function raw(): Promise<Raw> {
  const socket = connect({ host: "127.0.0.1", port: server.port });
  let buffer = Buffer.alloc(0);
  let wake: (() => void) | null = null;
  socket.on("data", (d) => {
    buffer = Buffer.concat([buffer, d]);
    wake?.();
  });
  const client: Raw = {
    socket,
    send: (...messages) => socket.write(Buffer.concat(messages)),
    async untilReady() {
      const seen: string[] = [];
      for (;;) {
        while (buffer.length >= 5 && buffer.length >= 1 + buffer.readInt32BE(1)) {
          const type = String.fromCharCode(buffer[0] as number);
          const body = buffer.subarray(5, 1 + buffer.readInt32BE(1));
          buffer = buffer.subarray(1 + buffer.readInt32BE(1));
          if (type === "D") seen.push(`row:${body.subarray(6).toString()}`);
          else if (type === "E") seen.push(`error:${/M([^\0]*)/.exec(body.toString())?.[1]}`);
          else if (type === "Z") {
            seen.push(`ready:${String.fromCharCode(body[0] as number)}`);
            return seen;
          }
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    },
  };
  client.send(wire.startup({ user: "postgres", database: "postgres" }));
  await client.untilReady();
  return client;
}

describe("serveEmbedded", () => {
  it("does not let another connection in between a batch's Bind and its Execute", async () => {
    const a = await raw();
    const b = await raw();
    a.send(wire.parse({ name: "a", text: "SELECT $1::text || ' from a' AS v" }), wire.sync());
    expect(await a.untilReady()).toEqual(["ready:I"]);
    b.send(wire.parse({ name: "b", text: "SELECT $1::text || ' from b' AS v" }), wire.sync());
    expect(await b.untilReady()).toEqual(["ready:I"]);

    // A's batch arrives in two packets, as a large or pipelined write can; B's whole batch in between.
    a.send(wire.bind({ statement: "a", values: ["1"] }));
    b.send(wire.bind({ statement: "b", values: ["2"] }), wire.execute({}), wire.sync());
    a.send(wire.execute({}), wire.sync());
    expect(await a.untilReady()).toEqual(["row:1 from a", "ready:I"]);
    expect(await b.untilReady()).toEqual(["row:2 from b", "ready:I"]);
    a.socket.destroy();
    b.socket.destroy();
  });

  it("gives each of many concurrent postgres.js connections its own rows, prepared or not", async () => {
    await using_(postgres(url, { ssl: false, max: 8, prepare: true, onnotice: () => {} }), async (sql) => {
      await sql`CREATE TABLE IF NOT EXISTS own (v int NOT NULL)`;
    });
    for (const prepare of [true, false]) {
      await using_(postgres(url, { ssl: false, max: 8, prepare, onnotice: () => {} }), async (sql) => {
        const answers = await Promise.all(
          Array.from({ length: 400 }, async (_, i) => {
            const shape = i % 4;
            if (shape === 0) return (await sql<{ v: number }[]>`SELECT ${i}::int AS v`)[0]?.v;
            if (shape === 1)
              return (await sql<{ v: number }[]>`INSERT INTO own VALUES (${i}) RETURNING v`)[0]?.v;
            if (shape === 2)
              return (await sql<{ v: number }[]>`SELECT ${i}::int + 0 AS v, ${"x"}::text AS w`)[0]?.v;
            return sql.begin(async (tx) => {
              await tx`INSERT INTO own VALUES (${-i})`;
              const [row] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM own WHERE v = ${-i}`;
              return row?.n === 1 ? i : -1;
            });
          }),
        );
        expect(answers).toEqual(Array.from({ length: 400 }, (_, i) => i));
        await sql`DELETE FROM own`;
      });
    }
  });

  it("takes messages larger than one read whole, beside other connections' work", async () => {
    await using_(postgres(url, { ssl: false, max: 4, onnotice: () => {} }), async (sql) => {
      const big = (i: number) => `${i}:`.padEnd(3_000_000 + i, "abcdefghij");
      const answers = await Promise.all(
        [0, 1, 2, 3].map(async (i) => {
          const [row] = await sql<{ n: number; head: string }[]>`
            SELECT length(${big(i)}::text) AS n, left(${big(i)}::text, 2) AS head`;
          return row;
        }),
      );
      expect(answers).toEqual([0, 1, 2, 3].map((i) => ({ n: 3_000_000 + i, head: `${i}:` })));
    });
  });

  it("rolls back the transaction of a connection that leaves inside it, and the others go on", async () => {
    await using_(postgres(url, { ssl: false, max: 1, onnotice: () => {} }), async (sql) => {
      await sql`CREATE TABLE IF NOT EXISTS left_behind (v text NOT NULL)`;
      const a = await raw();
      a.send(wire.query("BEGIN; INSERT INTO left_behind VALUES ('uncommitted')"));
      expect(await a.untilReady()).toEqual(["ready:T"]);
      const waiting = sql`INSERT INTO left_behind VALUES ('committed') RETURNING v`; // waits for A's turn to end
      a.socket.destroy();
      expect((await waiting)[0]?.v).toBe("committed");
      const rows = await sql<{ v: string }[]>`SELECT v FROM left_behind`;
      expect(rows.map((r) => r.v)).toEqual(["committed"]);
    });
  });

  it("frees the named statements of a connection that left", async () => {
    const probe = await raw();
    const count = async () => {
      probe.send(wire.query("SELECT count(*) FROM pg_prepared_statements"));
      return (await probe.untilReady())[0];
    };
    const before = await count();
    await using_(postgres(url, { ssl: false, max: 1, prepare: true, onnotice: () => {} }), async (sql) => {
      for (let i = 0; i < 5; i++) await sql.unsafe(`SELECT ${i} + $1::int AS v`, [i]);
      expect(await count()).not.toBe(before);
    });
    await expect.poll(count).toBe(before);
    probe.socket.destroy();
  });

  it("refuses COPY FROM STDIN (PGlite's backend would exit) with an error, and keeps serving", async () => {
    await using_(postgres(url, { ssl: false, max: 1, onnotice: () => {} }), async (sql) => {
      await sql`CREATE TABLE IF NOT EXISTS copied (v text NOT NULL)`;
      const inTransaction = await sql
        .begin(async (tx) => {
          await tx`INSERT INTO copied VALUES ('in the transaction')`;
          await tx.unsafe("COPY copied FROM STDIN");
        })
        .catch((e: unknown) => e);
      expect(inTransaction).toMatchObject({ code: "0A000" });
      expect((inTransaction as Error).message).toContain("COPY FROM STDIN is not supported");
      const simple = await sql.unsafe("copy copied (v) from stdin").catch((e: unknown) => e);
      expect(simple).toMatchObject({ code: "0A000" });
      expect(await sql`SELECT count(*)::int AS n FROM copied`).toEqual([{ n: 0 }]);
    });
  });

  it("answers an SSL request with 'N' and goes on in the clear", async () => {
    await using_(postgres(url, { ssl: "prefer", max: 1, onnotice: () => {} }), async (sql) => {
      expect((await sql<{ v: number }[]>`SELECT 1 AS v`)[0]?.v).toBe(1);
    });
  });

  it("refuses connections beyond its maximum with SQLSTATE 53300", async () => {
    const held = await Promise.all(Array.from({ length: 20 }, () => raw()));
    const error = await using_(postgres(url, { ssl: false, max: 1, onnotice: () => {} }), (sql) =>
      sql`SELECT 1`.catch((e: unknown) => e),
    );
    expect(error).toMatchObject({ code: "53300" });
    for (const client of held) client.socket.destroy();
  });
});

/** Runs `fn` with a client and ends the client however `fn` ends. */
async function using_<T>(sql: postgres.Sql, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

describe("serveEmbedded when PGlite itself fails", () => {
  it("fails every connection, and each new one, with an error instead of leaving them waiting", async () => {
    const broken = await PGlite.create({ dataDir: "memory://" });
    const failing = await serveEmbedded(broken);
    const brokenUrl = `postgres://postgres@127.0.0.1:${failing.port}/postgres`;
    try {
      await using_(postgres(brokenUrl, { ssl: false, max: 1, onnotice: () => {} }), async (sql) => {
        expect(await sql`SELECT 1 AS v`).toEqual([{ v: 1 }]);
        // As PGlite's backend exiting looks from here: the call throws.
        broken.execProtocolRawStream = () => Promise.reject(new Error("Program terminated with exit(1)"));
        // The statement in flight fails (postgres.js reports the closed connection), and does not hang.
        expect(await sql`SELECT 2 AS v`.catch((e: unknown) => e)).toBeInstanceOf(Error);
        expect(failing.failure).toContain("exit(1)");
      });
      await using_(postgres(brokenUrl, { ssl: false, max: 1, onnotice: () => {} }), async (sql) => {
        const next = await sql`SELECT 3 AS v`.catch((e: unknown) => e);
        expect(next).toMatchObject({ code: "XX000" });
      });
    } finally {
      await failing.close();
    }
  });
});
