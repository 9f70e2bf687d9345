import type { MongoClientOptions } from "mongodb";

/**
 * Fail fast when the database is gone, so callers can answer 503 instead of hanging, and never wait
 * forever on a connection (docs/adr/0010-database-outages.md): without a socket timeout, an operation on
 * a connection to a vanished server waits for TCP keepalive (about 14 minutes); without a wait-queue
 * timeout, once such operations hold the whole pool, every later operation waits as long as they do.
 */
export const DEFAULT_CLIENT_OPTIONS: MongoClientOptions = {
  serverSelectionTimeoutMS: 3000,
  connectTimeoutMS: 3000,
  // A reply slower than this fails as unavailable (503, retried later). A heavily loaded shared FerretDB
  // has exceeded it for createIndexes at start-up; CI's own database never has.
  socketTimeoutMS: 30_000,
  waitQueueTimeoutMS: 10_000,
};
