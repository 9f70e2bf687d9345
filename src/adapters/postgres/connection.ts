import postgres, { type Options, type Sql } from "postgres";

/**
 * Fail fast when the database is gone, so callers answer 503 instead of hanging
 * (docs/adr/0010-database-outages.md): a connection attempt gives up after 3 s, and a statement that
 * runs longer than 30 s is cancelled by the server (the same bound as the Mongo store's socket timeout).
 */
export const DEFAULT_POSTGRES_OPTIONS: Options<Record<string, postgres.PostgresType>> = {
  max: 20,
  connect_timeout: 3,
  idle_timeout: 60,
  max_lifetime: 30 * 60,
  onnotice: () => {},
  connection: { application_name: "herald", statement_timeout: 30_000 },
  types: {
    // bigint columns (sequence, retention) hold integers below 2^53: read them as numbers.
    bigint: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) },
  },
};

/** A client for the database at `url`; connections open on first use. */
export function openPostgres(url: string, options: Options<Record<string, postgres.PostgresType>> = {}): Sql {
  return postgres(url, {
    ...DEFAULT_POSTGRES_OPTIONS,
    ...options,
    connection: { ...DEFAULT_POSTGRES_OPTIONS.connection, ...options.connection },
    types: { ...DEFAULT_POSTGRES_OPTIONS.types, ...options.types },
  });
}
