import type { Sql } from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openPostgres } from "../../../src/adapters/postgres/connection.ts";
import { migrate } from "../../../src/adapters/postgres/migrate.ts";
import { PostgresShards } from "../../../src/adapters/postgres/shards.ts";
import { describeOnServer, type FreshPostgres, freshPostgresDatabase } from "../../support/postgres.ts";

// The ownership round's one read (heads and live processes together) answers what the two reads answer.

let db: FreshPostgres;
let sql: Sql;

describeOnServer("on a PostgreSQL server", () => {
  beforeAll(async () => {
    db = await freshPostgresDatabase("herald_test_pg_round");
    sql = openPostgres(db.url, db.options);
    await migrate(sql);
  });
  afterAll(async () => {
    await sql?.end({ timeout: 5 });
    await db?.cleanup();
  });

  it("reads the shards' heads and the live processes in one statement", async () => {
    const shards = new PostgresShards(sql, false, null);
    const at = (ms: number) => new Date(Date.UTC(2030, 0, 1) + ms);
    expect(await shards.round(at(0))).toEqual({ heads: [], live: [] });
    await shards.acquire([
      { shard: 1, generation: 1, owner: "a", expiresAt: at(5_000) },
      { shard: 2, generation: 1, owner: "b", expiresAt: at(5_000) },
    ]);
    await shards.acquire([{ shard: 1, generation: 2, owner: "b", expiresAt: at(9_000) }]);
    await shards.beat("a", at(1_000));
    await shards.beat("b", at(2_000));
    for (const t of [0, 1_000, 2_000]) {
      const round = await shards.round(at(t));
      const byShard = (xs: { shard: number }[]) => [...xs].sort((x, y) => x.shard - y.shard);
      expect(byShard(round.heads)).toEqual(byShard(await shards.heads()));
      expect(round.live.sort()).toEqual((await shards.live(at(t))).sort());
    }
    expect((await shards.round(at(1_500))).live).toEqual(["b"]);
    expect((await shards.round(at(0))).heads.find((h) => h.shard === 1)).toMatchObject({
      generation: 2,
      owner: "b",
    });
  });
});
