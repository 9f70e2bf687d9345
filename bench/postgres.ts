// The benchmark's side of a PostgreSQL run: a fresh database per run on the server at DATABASE_URL
// (created before, dropped after), the rows the run wrote (pg_stat_user_tables), its transactions and
// WAL, and the CPU of the server's processes when the server runs on this machine (from /proc).
import { readdirSync, readFileSync } from "node:fs";
import postgres, { type Sql } from "postgres";

const TICKS_PER_SECOND = 100;

/**
 * A backend that goes idle with statistics still pending flushes them within PGSTAT_IDLE_INTERVAL (10 s
 * in PostgreSQL 15 and later), and a busy one at most once a second: waiting this long after the work
 * stops makes pg_stat_user_tables count all of it. pg_stat_force_next_flush() flushes only the caller's.
 */
const STATS_SETTLE_MS = Number(process.env.BENCH_PG_STATS_SETTLE_MS ?? 11_000);

/** Rows inserted, updated (of which HOT) and deleted in one table, as pg_stat_user_tables counts them. */
export interface TableWrites {
  ins: number;
  upd: number;
  hot: number;
  del: number;
}

/** One normalised statement's work in the run's database, from pg_stat_statements. */
export interface StatementWork {
  query: string;
  calls: number;
  rows: number;
  ms: number;
}

export interface PostgresCounters {
  tables: Record<string, TableWrites>;
  /** Transactions committed and rolled back in the run's database. */
  transactions: number;
  /** The server's WAL position in bytes: every database's writes, ours and anyone else's. */
  walBytes: number;
}

/** One run's own database, and what the benchmark reads from it and from the server's processes. */
export class BenchDatabase {
  private readonly admin: Sql;
  private readonly stats: Sql;
  readonly name: string;
  /** DATABASE_URL for Herald: the given server, the run's database. */
  readonly url: string;
  /** The postmaster's pid when the server runs on this machine and /proc shows it; else null. */
  readonly postmaster: number | null;
  /** Whether the server records statements (pg_stat_statements in shared_preload_libraries). */
  readonly statementsRecorded: boolean;
  private constructor(
    admin: Sql,
    stats: Sql,
    name: string,
    url: string,
    postmaster: number | null,
    statementsRecorded: boolean,
  ) {
    this.admin = admin;
    this.stats = stats;
    this.name = name;
    this.url = url;
    this.postmaster = postmaster;
    this.statementsRecorded = statementsRecorded;
  }

  /** Creates database `name` on the server at `serverUrl` and connects to it. */
  static async create(serverUrl: string, name: string): Promise<BenchDatabase> {
    const quiet = { max: 1, onnotice: () => {}, connect_timeout: 5 };
    const admin = postgres(serverUrl, quiet);
    try {
      await admin.unsafe(`CREATE DATABASE "${name}"`);
    } catch (e) {
      await admin.end({ timeout: 1 });
      throw e;
    }
    const url = withDatabase(serverUrl, name);
    const stats = postgres(url, quiet);
    const [row] = await stats<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
    // A server that preloads pg_stat_statements can say which statements a delivery costs.
    const recorded = await stats
      .unsafe("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
      .then(() => stats`SELECT 1 FROM pg_stat_statements LIMIT 1`)
      .then(
        () => true,
        () => false,
      );
    return new BenchDatabase(admin, stats, name, url, localPostmaster(row!.pid, name), recorded);
  }

  /** Every statement run in this database so far, by query id; empty when the server does not record them. */
  async statements(): Promise<Map<string, StatementWork>> {
    const out = new Map<string, StatementWork>();
    if (!this.statementsRecorded) return out;
    const rows = await this.stats<({ id: string } & StatementWork)[]>`
      SELECT queryid::text AS id, query, calls::float8 AS calls, rows::float8 AS rows,
             total_exec_time AS ms
      FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`;
    for (const r of rows) out.set(r.id, { query: r.query, calls: r.calls, rows: r.rows, ms: r.ms });
    return out;
  }

  /**
   * The run's rows written, transactions and WAL, after waiting for every backend's statistics to reach
   * the shared counters.
   */
  async settledCounters(): Promise<PostgresCounters> {
    // Only this connection's pending statistics; PostgreSQL 14 and older have no such function.
    await this.stats`SELECT pg_stat_force_next_flush()`.catch(() => {});
    await new Promise((r) => setTimeout(r, STATS_SETTLE_MS));
    const rows = await this.stats<{ relname: string; ins: number; upd: number; hot: number; del: number }[]>`
      SELECT relname, n_tup_ins::float8 AS ins, n_tup_upd::float8 AS upd, n_tup_hot_upd::float8 AS hot,
             n_tup_del::float8 AS del
      FROM pg_stat_user_tables`;
    const [db] = await this.stats<{ transactions: number; wal: number }[]>`
      SELECT (xact_commit + xact_rollback)::float8 AS transactions,
             pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS wal
      FROM pg_stat_database WHERE datname = current_database()`;
    const tables: Record<string, TableWrites> = {};
    for (const r of rows) tables[r.relname] = { ins: r.ins, upd: r.upd, hot: r.hot, del: r.del };
    return { tables, transactions: db?.transactions ?? 0, walBytes: db?.wal ?? 0 };
  }

  /**
   * CPU seconds used so far by the server's processes: every child of the postmaster that is alive, and
   * the postmaster with its reaped children (a backend that exits adds its time to the postmaster's
   * cutime and cstime). `byKind` splits the total by what the processes are (their titles): the
   * connections' backends running statements, autovacuum workers, the WAL writer, the checkpointer and
   * background writer, other background processes, and `exited`, the processes reaped in between (mostly
   * autovacuum workers) with the postmaster's own time. null when the server is not on this machine.
   */
  cpuSeconds(): { total: number; system: number; byKind: Record<PostgresProcessKind, number> } | null {
    if (this.postmaster === null) return null;
    const own = statFields(this.postmaster);
    if (!own) return null;
    let system = own.stime + own.cstime;
    const byKind: Record<PostgresProcessKind, number> = {
      statements: 0,
      autovacuum: 0,
      "wal writer": 0,
      "checkpointer and background writer": 0,
      "other background": 0,
      exited: own.utime + own.stime + own.cutime + own.cstime,
    };
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const f = statFields(Number(entry));
      if (f && f.ppid === this.postmaster) {
        system += f.stime;
        byKind[processKind(Number(entry))] += f.utime + f.stime;
      }
    }
    const ticks = Object.values(byKind).reduce((a, b) => a + b, 0);
    for (const k of Object.keys(byKind) as PostgresProcessKind[]) byKind[k] /= TICKS_PER_SECOND;
    return { total: ticks / TICKS_PER_SECOND, system: system / TICKS_PER_SECOND, byKind };
  }

  /** Drops the run's database (after Herald's processes stopped) and closes both connections. */
  async drop(): Promise<void> {
    await this.stats.end({ timeout: 5 });
    try {
      await this.admin.unsafe(`DROP DATABASE IF EXISTS "${this.name}" WITH (FORCE)`);
    } finally {
      await this.admin.end({ timeout: 5 });
    }
  }
}

/** The server's counters between two readings, summed over tables and per table. */
export function writesBetween(a: PostgresCounters, b: PostgresCounters) {
  const tables: Record<string, TableWrites> = {};
  let rows = 0;
  for (const [name, t] of Object.entries(b.tables)) {
    const s = a.tables[name] ?? { ins: 0, upd: 0, hot: 0, del: 0 };
    const d = { ins: t.ins - s.ins, upd: t.upd - s.upd, hot: t.hot - s.hot, del: t.del - s.del };
    if (d.ins + d.upd + d.del === 0) continue;
    tables[name] = d;
    rows += d.ins + d.upd + d.del;
  }
  return { rows, tables, transactions: b.transactions - a.transactions, walBytes: b.walBytes - a.walBytes };
}

/** The statements run between two readings, most called first. */
export function statementsBetween(
  a: Map<string, StatementWork>,
  b: Map<string, StatementWork>,
): StatementWork[] {
  const out: StatementWork[] = [];
  for (const [id, w] of b) {
    const s = a.get(id) ?? { calls: 0, rows: 0, ms: 0 };
    const d = { query: w.query, calls: w.calls - s.calls, rows: w.rows - s.rows, ms: w.ms - s.ms };
    if (d.calls > 0) out.push(d);
  }
  return out.sort((x, y) => y.calls - x.calls);
}

/** `url` naming database `name` instead of its own (host, user, password and options kept). */
function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export type PostgresProcessKind =
  | "statements"
  | "autovacuum"
  | "wal writer"
  | "checkpointer and background writer"
  | "other background"
  | "exited";

/** What a child of the postmaster is, from its title (`postgres: walwriter`, `postgres: user db host(port) idle`). */
function processKind(pid: number): PostgresProcessKind {
  let title: string;
  try {
    title = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "exited";
  }
  const what = title.replace(/^postgres:\s*/, "");
  if (what.startsWith("autovacuum worker")) return "autovacuum";
  if (what.startsWith("walwriter")) return "wal writer";
  if (what.startsWith("checkpointer") || what.startsWith("background writer")) {
    return "checkpointer and background writer";
  }
  if (
    /^(autovacuum launcher|logical replication launcher|archiver|stats collector|walsender|walreceiver)/.test(
      what,
    )
  ) {
    return "other background";
  }
  return "statements";
}

interface Stat {
  ppid: number;
  utime: number;
  stime: number;
  cutime: number;
  cstime: number;
}

function statFields(pid: number): Stat | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which may hold spaces: state is field 3, ppid 4, utime 14.
    const f = stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number);
    return { ppid: f[1]!, utime: f[11]!, stime: f[12]!, cutime: f[13]!, cstime: f[14]! };
  } catch {
    return null;
  }
}

/**
 * The postmaster of our own backend `pid`, if /proc shows that backend here: a process named postgres
 * whose title names our database. A server elsewhere (or in another pid namespace) gives null.
 */
function localPostmaster(pid: number, database: string): number | null {
  try {
    const comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    const title = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    if (comm !== "postgres" || !title.includes(database)) return null;
    return statFields(pid)?.ppid ?? null;
  } catch {
    return null;
  }
}
