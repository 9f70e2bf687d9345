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
  // Seconds before a connection that failed to connect tries again. postgres.js's own backoff counts the
  // failures of the whole pool and grows to 10–20 s after some twenty of them, a few seconds into any
  // outage; a statement waiting for that connection (a publish, the readiness ping) then waited it out
  // after the database was back. A refused or reset attempt costs the server nothing, so the pool tries
  // again every quarter of a second at most (ADR 10).
  backoff: reconnectBackoff,
  onnotice: () => {},
  connection: {
    application_name: "herald",
    statement_timeout: 30_000,
    // Every run of a prepared statement is planned for its parameters and the tables as they are then.
    // PostgreSQL's default keeps a generic plan after five runs, made from the table sizes of that moment:
    // made while `deliveries` was new and small, the batched result update joined to a sequential scan of
    // the whole table and kept it as the table grew (7 ms a batch at 16,000 rows, ADR 18). Planning costs
    // 0.4–0.6 ms a publish statement, and statements carry batches.
    plan_cache_mode: "force_custom_plan",
    // A page read at random costs the planner 1.1 sequential reads (PostgreSQL's advice for solid-state
    // storage and tables held in memory, where Herald's hot rows are) instead of 4, a spinning disk's: at 4,
    // a full batch of 200 results against `deliveries` of 10,000–20,000 rows was joined to a scan of the
    // whole table, 5–10 ms a batch against 1.5–3.4 ms by primary key (ADR 18). A DATABASE_URL parameter
    // (`?random_page_cost=4`) overrides it, as it does any setting here.
    random_page_cost: "1.1",
  },
  types: {
    // bigint columns (sequence, retention) hold integers below 2^53: read them as numbers.
    bigint: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) },
  },
};

/** Seconds before a failed connection tries again: 0.05 s after the first failure, never more than 0.25 s. */
export function reconnectBackoff(failures: number): number {
  return Math.min(0.05 * Math.max(1, failures), RECONNECT_AT_MOST_S);
}

/** The longest a connection waits before trying again, however long the outage. */
export const RECONNECT_AT_MOST_S = 0.25;

/** A client for the database at `url`; connections open on first use. */
export function openPostgres(url: string, options: Options<Record<string, postgres.PostgresType>> = {}): Sql {
  return postgres(url, {
    ...DEFAULT_POSTGRES_OPTIONS,
    ...options,
    connection: { ...DEFAULT_POSTGRES_OPTIONS.connection, ...options.connection },
    types: { ...DEFAULT_POSTGRES_OPTIONS.types, ...options.types },
  });
}

/** A client whose connections can be replaced while the repositories keep the same `sql`. */
export interface RenewableSql {
  /** Stands for the current client: every call and property reaches whichever client is current. */
  sql: Sql;
  /**
   * Replaces the client with a fresh one. The old one's connections are destroyed after `finishWithinS`
   * (at once by default): statements still waiting on them then fail as unavailable and callers try
   * again on new connections.
   */
  renew(finishWithinS?: number): void;
}

/**
 * A client that can be renewed. A connection to a server that went silent (a network partition, a
 * firewall dropping packets, a proxy that stopped forwarding) never fails by itself: the server's
 * statement_timeout cannot reach it, and TCP keepalive gives up only after many minutes. The only cure
 * is new connections, which `renew` makes without the repositories noticing.
 */
export function renewablePostgres(
  url: string,
  options: Options<Record<string, postgres.PostgresType>> = {},
): RenewableSql {
  let current = openPostgres(url, options);
  const sql = new Proxy(function stand() {} as unknown as Sql, {
    apply: (_target, _self, args) =>
      Reflect.apply(current as unknown as (...a: unknown[]) => unknown, current, args),
    get: (_target, prop) => {
      const value: unknown = Reflect.get(current, prop);
      return typeof value === "function" ? value.bind(current) : value;
    },
  });
  return {
    sql,
    renew(finishWithinS = 0) {
      const old = current;
      current = openPostgres(url, options);
      keepTypes(old, current);
      void old.end({ timeout: finishWithinS }).catch(() => {});
    },
  };
}

/** The parts of postgres.js's options (`sql.options`) that hold what it learnt of the server's types. */
interface TypeState {
  fetch_types: boolean;
  parsers: Record<number, unknown>;
  serializers: Record<number, unknown>;
  shared: { typeArrayMap: Record<number, number> };
}

/**
 * Stops `sql` from asking the server for its array types on every new connection, once it knows them
 * (after its first statement succeeded). postgres.js asks on each connect, and when that connection is
 * closed mid-question (a database shutting down, a backend killed) its promise is rejected with nobody
 * listening: an unhandled rejection that ends the process. Array types do not change under a running
 * server, so one answer serves every later connection.
 */
export function typesKnown(sql: Sql): void {
  (sql.options as unknown as TypeState).fetch_types = false;
}

/** Hands what `from` learnt of the server's types to `to`, which then never asks (see typesKnown). */
function keepTypes(from: Sql, to: Sql): void {
  const a = from.options as unknown as TypeState;
  const b = to.options as unknown as TypeState;
  Object.assign(b.parsers, a.parsers);
  Object.assign(b.serializers, a.serializers);
  Object.assign(b.shared.typeArrayMap, a.shared.typeArrayMap);
  b.fetch_types = a.fetch_types;
}
