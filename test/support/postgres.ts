import { inject } from "vitest";
import { openPostgres } from "../../src/adapters/postgres/connection.ts";

/** A database of its own on the run's PostgreSQL server (global-setup.ts provides `postgresUrl`). */
export async function freshPostgresDatabase(prefix = "herald_test"): Promise<{ url: string; cleanup(): Promise<void> }> {
  const server = new URL(inject("postgresUrl"));
  const name = `${prefix}_${globalThis.crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`.slice(0, 63);
  const admin = openPostgres(server.toString(), { max: 1 });
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async cleanup() {
      const a = openPostgres(server.toString(), { max: 1 });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await a.end({ timeout: 5 });
      }
    },
  };
}
