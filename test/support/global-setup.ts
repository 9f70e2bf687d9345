import type { TestProject } from "vitest/node";

/**
 * One MongoDB for the whole run: MONGODB_URI when set (CI points it at FerretDB), otherwise an
 * in-memory mongod from mongodb-memory-server. Each test file then uses a database of its own.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Until the PostgreSQL fallbacks land: DATABASE_URL, else the development server.
  project.provide("postgresUrl", process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:55432/postgres");
  const given = process.env.MONGODB_URI;
  if (given) {
    project.provide("mongoUri", given);
    return async () => {};
  }
  const { MongoMemoryServer } = await import("mongodb-memory-server");
  let server: InstanceType<typeof MongoMemoryServer>;
  try {
    server = await MongoMemoryServer.create({ instance: { ip: "127.0.0.1" } });
  } catch (e) {
    throw new Error(
      `No MongoDB for the tests: MONGODB_URI is not set and mongodb-memory-server could not start one (${(e as Error).message}). Set MONGODB_URI to a MongoDB 7+ or FerretDB server on loopback.`,
    );
  }
  project.provide("mongoUri", server.getUri());
  return async () => {
    await server.stop();
  };
}
