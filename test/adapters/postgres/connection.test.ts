import { afterAll, beforeAll, expect, it } from "vitest";
import { openPostgres } from "../../../src/adapters/postgres/connection.ts";
import { describeOnServer, freshPostgresDatabase } from "../../support/postgres.ts";

let db: Awaited<ReturnType<typeof freshPostgresDatabase>>;

async function settings(url: string): Promise<Record<string, string>> {
  const sql = openPostgres(url, { ...db.options, max: 1 });
  try {
    const rows = await sql<{ name: string; setting: string }[]>`
      SELECT name, current_setting(name) AS setting FROM unnest(${[
        "application_name",
        "statement_timeout",
        "plan_cache_mode",
        "random_page_cost",
      ]}::text[]) AS name`;
    return Object.fromEntries(rows.map((r) => [r.name, r.setting]));
  } finally {
    await sql.end({ timeout: 5 });
  }
}

// Startup parameters: the embedded database's one session ignores them (its planner settings are set on
// the session instead, embedded.test.ts).
describeOnServer("the store's sessions on a server", () => {
  beforeAll(async () => {
    db = await freshPostgresDatabase("herald_test_connection");
  });
  afterAll(async () => {
    await db?.cleanup();
  });

  it("carry Herald's settings", async () => {
    expect(await settings(db.url)).toEqual({
      application_name: "herald",
      statement_timeout: "30s",
      plan_cache_mode: "force_custom_plan",
      random_page_cost: "1.1",
    });
  });

  it("take a setting given as a DATABASE_URL parameter over Herald's", async () => {
    const url = new URL(db.url);
    url.searchParams.set("random_page_cost", "4");
    url.searchParams.set("application_name", "herald-eu");
    expect(await settings(url.toString())).toMatchObject({
      random_page_cost: "4",
      application_name: "herald-eu",
    });
  });
});
