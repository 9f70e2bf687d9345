// npm run bench: starts a local receiver and Herald, publishes events fanned out to several endpoints,
// and prints deliveries per second, publish-to-receipt latency, database round trips per delivery and
// peak memory — for the in-memory store, for MongoDB when MONGODB_URI is set and for PostgreSQL when
// DATABASE_URL is set (each PostgreSQL run on a database of its own, created and dropped on that server).
// Figures go to bench/results/<timestamp>.json too.
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { Worker } from "node:worker_threads";
import { Agent, request } from "undici";
import { startOtlpSink } from "./otlp-sink.ts";
import {
  BenchDatabase,
  type PostgresCounters,
  type StatementWork,
  statementsBetween,
  writesBetween,
} from "./postgres.ts";

type Store = "memory" | "mongo" | "postgres";

const ROOT = resolve(import.meta.dirname, "..");
/** Endpoint counts to measure, e.g. "1,8,64". */
const ENDPOINT_COUNTS = (process.env.BENCH_ENDPOINTS ?? "8").split(",").map(Number);
/** Herald process counts to measure on the database (the in-memory store is one process). */
const PROCESS_COUNTS = (process.env.BENCH_PROCESSES ?? "1,3").split(",").map(Number);
/** Deliveries per throughput phase; events are this divided by the endpoints (BENCH_EVENTS overrides). */
const DELIVERIES: Record<Store, number> = {
  memory: Number(process.env.BENCH_DELIVERIES ?? 32_000),
  mongo: Number(process.env.BENCH_DB_DELIVERIES ?? 3_200),
  // Issue 16's shape: 2,000 events to 8 endpoints.
  postgres: Number(process.env.BENCH_PG_DELIVERIES ?? 16_000),
};
/** Deliveries per second offered in the latency phase (events/s times endpoints); BENCH_RATE (events/s) overrides. */
const RATE_DELIVERIES: Record<Store, number> = {
  memory: Number(process.env.BENCH_RATE_DELIVERIES ?? 4_000),
  mongo: Number(process.env.BENCH_DB_RATE_DELIVERIES ?? 200),
  // Issue 16's latency target is set at 50 events/s to 8 endpoints.
  postgres: Number(process.env.BENCH_PG_RATE_DELIVERIES ?? 400),
};
const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 10);
const PUBLISH_CONCURRENCY = Number(process.env.BENCH_PUBLISH_CONCURRENCY ?? 64);
const EVENT_TYPE = "message.delivered";
const TICKS_PER_SECOND = 100;

interface Receipt {
  id: string;
  path: string;
  at: number;
}

class Receiver {
  private readonly worker: Worker;
  readonly port: number;
  private constructor(worker: Worker, port: number) {
    this.worker = worker;
    this.port = port;
  }

  static async start(): Promise<Receiver> {
    const worker = new Worker(join(ROOT, "bench/receiver-worker.mjs"));
    const port = await new Promise<number>((res) =>
      worker.once("message", (m: { type: string; port: number }) => res(m.port)),
    );
    return new Receiver(worker, port);
  }

  private ask<T>(type: string, reply: string): Promise<T> {
    return new Promise((res) => {
      const on = (m: { type: string } & Record<string, unknown>) => {
        if (m.type !== reply) return;
        this.worker.off("message", on);
        res(m as T);
      };
      this.worker.on("message", on);
      this.worker.postMessage({ type });
    });
  }

  /** Deliveries received since the last take, and how many distinct (event, endpoint) pairs they are. */
  async count(): Promise<{ count: number; distinct: number }> {
    return await this.ask<{ count: number; distinct: number }>("count", "count");
  }

  async take(): Promise<Receipt[]> {
    const { receipts } = await this.ask<{ receipts: [string, string, number][] }>("take", "receipts");
    return receipts.map(([id, path, at]) => ({ id, path, at }));
  }

  async close() {
    this.worker.postMessage({ type: "close" });
    await new Promise((r) => this.worker.once("exit", r));
  }
}

interface Server {
  base: string;
  token: string;
  pid: number;
  stop(): Promise<void>;
}

/** Herald's environment for `store`: only that store's variable, so a bench given both URLs can run both. */
function storeEnv(store: Store, dbName: string, databaseUrl: string | null): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HERALD_STORE: store };
  delete env.DATABASE_URL;
  delete env.MONGODB_URI;
  if (store === "mongo") Object.assign(env, { MONGODB_URI: process.env.MONGODB_URI, MONGODB_DB: dbName });
  if (store === "postgres") env.DATABASE_URL = databaseUrl ?? "";
  return env;
}

async function startHerald(store: Store, dbName: string, databaseUrl: string | null): Promise<Server> {
  // BENCH_PROFILE=dir writes a V8 CPU profile of Herald there.
  const profile = process.env.BENCH_PROFILE
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
    : [];
  const child = spawn(process.execPath, [...profile, join(ROOT, "bench/herald-server.ts")], {
    cwd: ROOT,
    env: {
      ...storeEnv(store, dbName, databaseUrl),
      HERALD_DATA_DIR: join(ROOT, ".herald-bench"),
      HERALD_ALLOW_HTTP_URLS: "true",
      HERALD_ALLOW_PRIVATE_NETWORKS: "true",
      // The benchmark publishes through one token at thousands per second.
      HERALD_RATE_LIMIT: "off",
      HERALD_PUBLISH_RATE_LIMIT: "off",
      HERALD_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "silent",
      // Every process of a run issues its token for the same project: endpoints made through one are
      // the subscribers of events published through any of them.
      BENCH_TENANT_ID: `bench-${dbName}`,
      BENCH_PROJECT_ID: "bench",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise<string>((res, rej) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once("line", res);
    child.once("exit", (code) => rej(new Error(`herald exited with ${code}`)));
  });
  const { port, token } = JSON.parse(line) as { port: number; token: string };
  return {
    base: `http://127.0.0.1:${port}`,
    token,
    pid: child.pid!,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    },
  };
}

const agent = new Agent({ connections: 128, pipelining: 1 });

async function call(s: Server, method: string, path: string, body?: unknown): Promise<unknown> {
  const r = await request(`${s.base}${path}`, {
    method: method as "GET",
    dispatcher: agent,
    headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.body.text();
  if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode} ${text}`);
  return path === "/metrics" ? text : JSON.parse(text);
}

function eventData(i: number) {
  const hex = i.toString(16).padStart(12, "0");
  return {
    message_id: `6f1c2b9e-8a44-4c1e-9a53-${hex}`,
    status: "delivered",
    channel: "email",
    message_type: "transactional",
    recipient: `user${i}@example.com`,
  };
}

/** Database commands sent and documents they write, summed over the processes. */
async function dbCounters(
  servers: Server[],
): Promise<{ commands: number; written: number; byCommand: Record<string, number> }> {
  let commands = 0;
  let written = 0;
  const byCommand: Record<string, number> = {};
  for (const s of servers) {
    const text = (await call(s, "GET", "/metrics")) as string;
    for (const [, command, collection, n] of text.matchAll(
      /^herald_db_commands_total\{command="([^"]*)",collection="([^"]*)"\} (\d+)/gm,
    )) {
      commands += Number(n);
      const name = collection ? `${command} ${collection}` : (command as string);
      byCommand[name] = (byCommand[name] ?? 0) + Number(n);
    }
    written += Number(/^herald_db_documents_written_total (\d+)/m.exec(text)?.[1] ?? 0);
  }
  return { commands, written, byCommand };
}

/** CPU seconds (user + system, or system only) a process has used, from /proc. */
function cpuSeconds(pid: number, only: "all" | "system" = "all"): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((only === "all" ? Number(fields[11]) : 0) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** The database server's processes on this machine (FerretDB's and PostgreSQL's), by name. */
function databasePids(): { ferretdb: number[]; postgres: number[] } {
  const out = { ferretdb: [] as number[], postgres: [] as number[] };
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const comm = readFileSync(`/proc/${entry}/comm`, "utf8").trim();
      if (/^ferretdb/.test(comm)) out.ferretdb.push(Number(entry));
      else if (/^postgres/.test(comm)) out.postgres.push(Number(entry));
    } catch {}
  }
  return out;
}

/** CPU seconds used so far by the database's processes and by the whole machine. */
function databaseCpu(): { ferretdb: number; postgres: number; machine: number; steal: number } {
  const pids = databasePids();
  const sum = (xs: number[]) => xs.reduce((a, pid) => a + cpuSeconds(pid), 0);
  const stat = readFileSync("/proc/stat", "utf8").split("\n")[0]!.split(/\s+/).slice(1, 9).map(Number);
  const busy = stat.reduce((a, b) => a + b, 0) - (stat[3] ?? 0) - (stat[4] ?? 0);
  return {
    ferretdb: sum(pids.ferretdb),
    postgres: sum(pids.postgres),
    machine: busy / TICKS_PER_SECOND,
    // Time the hypervisor gave this machine's CPUs to other guests: a busy host, whatever ran here.
    steal: (stat[7] ?? 0) / TICKS_PER_SECOND,
  };
}

function peakRssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return Number.NaN;
  }
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** What Herald recorded for every endpoint, by status and error: printed when deliveries go missing. */
async function recordedOutcomes(s: Server): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const hooks = (await call(s, "GET", "/api/v1/webhooks?limit=100")) as { data: { id: string }[] };
  for (const w of hooks.data) {
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `&cursor=${cursor}` : "";
      const page = (await call(s, "GET", `/api/v1/webhooks/${w.id}/deliveries?limit=100${q}`)) as {
        data: { status: string; error: string | null }[];
        next_cursor: string | null;
      };
      for (const d of page.data)
        counts[`${d.status}/${d.error}`] = (counts[`${d.status}/${d.error}`] ?? 0) + 1;
      cursor = page.next_cursor;
    } while (cursor);
  }
  return counts;
}

async function waitForReceipts(s: Server, rx: Receiver, expected: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { distinct: n } = await rx.count();
    if (process.env.BENCH_DEBUG) console.log(`received ${n}/${expected}`);
    if (n >= expected) return;
    if (Date.now() > deadline) {
      const outcomes = await recordedOutcomes(s).catch((e: Error) => ({ unavailable: e.message }));
      throw new Error(
        `only ${n} of ${expected} deliveries arrived in ${timeoutMs} ms; Herald recorded ${JSON.stringify(outcomes)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Every published event reached every endpoint, and nothing arrived that was not published: a count
 * alone could let duplicates hide a missing delivery. Returns each pair's first arrival (the receipts
 * the figures use) and how many arrived again.
 */
function checkComplete(
  phase: string,
  receipts: Receipt[],
  sent: Map<string, number>,
  endpoints: number,
): { first: Receipt[]; duplicates: number } {
  const pairs = new Map<string, Receipt>();
  for (const r of receipts) {
    if (!sent.has(r.id))
      throw new Error(`${phase}: the receiver got an event that was not published: ${r.id}`);
    const key = `${r.id} ${r.path}`;
    if (!pairs.has(key)) pairs.set(key, r);
  }
  if (pairs.size !== sent.size * endpoints) {
    throw new Error(`${phase}: ${pairs.size} distinct deliveries arrived, ${sent.size * endpoints} expected`);
  }
  return { first: [...pairs.values()], duplicates: receipts.length - pairs.size };
}

async function publish(s: Server, i: number, sent: Map<string, number>, calls?: number[]) {
  const start = performance.now();
  const startedAt = Date.now();
  const r = (await call(s, "POST", "/api/v1/events", { type: EVENT_TYPE, data: eventData(i) })) as {
    id: string;
  };
  calls?.push(performance.now() - start);
  sent.set(r.id, startedAt);
}

/**
 * BENCH_PUBLISH_BATCH=N: the throughput phase publishes N events per POST /api/v1/events/batch (1 to 100)
 * instead of one per POST /api/v1/events; the publish call figures are then per batch call.
 */
const PUBLISH_BATCH = Number(process.env.BENCH_PUBLISH_BATCH ?? 1);
if (!Number.isInteger(PUBLISH_BATCH) || PUBLISH_BATCH < 1 || PUBLISH_BATCH > 100)
  throw new Error("BENCH_PUBLISH_BATCH must be a whole number from 1 to 100");

/** Publishes the events `indices` in one batch call; every one must be accepted. */
async function publishBatch(s: Server, indices: number[], sent: Map<string, number>, calls?: number[]) {
  const start = performance.now();
  const startedAt = Date.now();
  const r = (await call(s, "POST", "/api/v1/events/batch", {
    events: indices.map((i) => ({ type: EVENT_TYPE, data: eventData(i) })),
  })) as { data: { status: number; event?: { id: string }; problem?: unknown }[] };
  calls?.push(performance.now() - start);
  for (const item of r.data) {
    if (item.status !== 202 || !item.event)
      throw new Error(`a batch item was refused: ${JSON.stringify(item)}`);
    sent.set(item.event.id, startedAt);
  }
}

/** Events per second offered in the latency phase, for every store (else from RATE_DELIVERIES). */
const RATE_EVENTS = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : null;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const loads = () => loadavg().map((l) => Number(l.toFixed(2)));

async function runStore(store: Store, endpoints: number, processes: number) {
  const events = Number(process.env.BENCH_EVENTS ?? Math.max(20, Math.round(DELIVERIES[store] / endpoints)));
  const rate = RATE_EVENTS ?? Math.max(1, Math.round(RATE_DELIVERIES[store] / endpoints));
  const rx = await Receiver.start();
  const dbName = `herald_bench_${Date.now()}`;
  let pg: BenchDatabase | null = null;
  const servers: Server[] = [];
  try {
    if (store === "postgres") pg = await BenchDatabase.create(process.env.DATABASE_URL!, dbName);
    for (let p = 0; p < processes; p++) servers.push(await startHerald(store, dbName, pg?.url ?? null));
    const s0 = servers[0]!;
    const via = (i: number) => servers[i % servers.length]!;
    for (let e = 0; e < endpoints; e++) {
      await call(s0, "POST", "/api/v1/webhooks", {
        url: `http://127.0.0.1:${rx.port}/ep${e}`,
        events: [EVENT_TYPE],
      });
    }
    // Warm-up: connections, JIT, indexes, shard ownership settled between the processes.
    const warm = new Map<string, number>();
    const warmEvents = Math.max(5, Math.round(400 / endpoints));
    await Promise.all(Array.from({ length: warmEvents }, (_, i) => publish(via(i), i, warm)));
    await waitForReceipts(s0, rx, warmEvents * endpoints, 120_000);
    if (processes > 1) await sleep(3_000);
    await rx.take();

    // 1. Throughput: publish as fast as the API takes it, measure until the last delivery lands.
    const rows0: PostgresCounters | null = pg ? await pg.settledCounters() : null;
    const statements0 = pg ? await pg.statements() : new Map<string, StatementWork>();
    const db0 = store === "memory" ? null : await dbCounters(servers);
    const cpu0 = servers.reduce((a, s) => a + cpuSeconds(s.pid), 0);
    const sys0 = servers.reduce((a, s) => a + cpuSeconds(s.pid, "system"), 0);
    const dbCpu0 = databaseCpu();
    const pgCpu0 = pg?.cpuSeconds() ?? null;
    const load0 = loads();
    const sent = new Map<string, number>();
    const publishCalls: number[] = [];
    const t0 = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: PUBLISH_CONCURRENCY }, async () => {
        while (next < events) {
          if (PUBLISH_BATCH === 1) {
            const i = next++;
            await publish(via(i), 1_000 + i, sent, publishCalls);
            continue;
          }
          const first = next;
          next = Math.min(events, next + PUBLISH_BATCH);
          const indices = Array.from({ length: next - first }, (_, k) => 1_000 + first + k);
          await publishBatch(via(first), indices, sent, publishCalls);
        }
      }),
    );
    const publishedAt = Date.now();
    await waitForReceipts(s0, rx, events * endpoints, 600_000);
    // Let the last results be written, and anything sent twice arrive, before counting.
    await sleep(500);
    const { first: receipts, duplicates } = checkComplete("throughput", await rx.take(), sent, endpoints);
    const t1 = Math.max(...receipts.map((r) => r.at));
    const db1 = store === "memory" ? null : await dbCounters(servers);
    const cpu1 = servers.reduce((a, s) => a + cpuSeconds(s.pid), 0);
    const sys1 = servers.reduce((a, s) => a + cpuSeconds(s.pid, "system"), 0);
    const dbCpu1 = databaseCpu();
    const pgCpu1 = pg?.cpuSeconds() ?? null;
    const load1 = loads();
    const statements = pg ? statementsBetween(statements0, await pg.statements()) : [];
    const rows1: PostgresCounters | null = pg ? await pg.settledCounters() : null;
    const written = rows0 && rows1 ? writesBetween(rows0, rows1) : null;
    const deliveries = receipts.length;
    // Once publishing stops, what remains is pure dispatch: the backlog's drain rate.
    const drained = receipts.filter((r) => r.at > publishedAt).length;
    const drainRate = t1 > publishedAt ? Math.round(drained / ((t1 - publishedAt) / 1000)) : null;
    const perDelivery = (x: number) => Number((x / deliveries).toFixed(3));
    const per1000 = (x: number) => Number(((x / deliveries) * 1000).toFixed(2));
    const heraldCpu = per1000(cpu1 - cpu0);
    // The database's processes on this machine: for PostgreSQL, the children of the run's server's
    // postmaster; for MongoDB, every FerretDB and PostgreSQL process by name (other users' included).
    const postgresCpu =
      store === "postgres"
        ? pgCpu0 !== null && pgCpu1 !== null
          ? per1000(pgCpu1.total - pgCpu0.total)
          : null
        : store === "mongo"
          ? per1000(dbCpu1.postgres - dbCpu0.postgres)
          : null;
    const ferretCpu = store === "mongo" ? per1000(dbCpu1.ferretdb - dbCpu0.ferretdb) : null;

    // 2. Latency at a steady publish rate.
    const steady = new Map<string, number>();
    const steadyCalls: number[] = [];
    const total = rate * RATE_SECONDS;
    const steadyLoad0 = loads();
    const start = Date.now();
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / rate;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      inflight.push(publish(via(i), 100_000 + i, steady, steadyCalls));
    }
    await Promise.all(inflight);
    await waitForReceipts(s0, rx, total * endpoints, 300_000);
    await sleep(500);
    const steadyCheck = checkComplete("steady", await rx.take(), steady, endpoints);
    const steadyReceipts = steadyCheck.first;
    const latencies = sorted(steadyReceipts.map((r) => r.at - steady.get(r.id)!));

    return {
      store,
      processes,
      endpoints,
      publish_concurrency: PUBLISH_CONCURRENCY,
      // The caps decide the ceiling: at most endpoints x per-endpoint requests are in flight.
      concurrency: Number(process.env.HERALD_CONCURRENCY ?? 200),
      endpoint_concurrency: Number(process.env.HERALD_ENDPOINT_CONCURRENCY ?? 10),
      throughput: {
        events,
        deliveries,
        // Pairs that arrived more than once: none unless something was sent twice.
        duplicates,
        publish_seconds: (publishedAt - t0) / 1000,
        seconds: (t1 - t0) / 1000,
        deliveries_per_second: Math.round(deliveries / ((t1 - t0) / 1000)),
        drain_deliveries_per_second: drainRate,
        publish_call_p50_ms: Number(pct(sorted(publishCalls), 50).toFixed(1)),
        db_round_trips_per_delivery: db0 && db1 ? perDelivery(db1.commands - db0.commands) : null,
        db_documents_written_per_delivery:
          store === "mongo" && db0 && db1 ? perDelivery(db1.written - db0.written) : null,
        db_round_trips_per_delivery_by_command:
          db0 && db1
            ? Object.fromEntries(
                Object.entries(db1.byCommand)
                  .map(([k, v]) => [k, perDelivery(v - (db0.byCommand[k] ?? 0))] as const)
                  .filter(([, v]) => v > 0),
              )
            : null,
        // PostgreSQL's own count (pg_stat_user_tables: inserted + updated + deleted), settled.
        db_rows_written_per_delivery: written ? perDelivery(written.rows) : null,
        db_rows_written_per_delivery_by_table: written
          ? Object.fromEntries(
              Object.entries(written.tables).map(([name, t]) => [
                name,
                {
                  inserted: perDelivery(t.ins),
                  updated: perDelivery(t.upd),
                  hot_updated: perDelivery(t.hot),
                  deleted: perDelivery(t.del),
                },
              ]),
            )
          : null,
        db_transactions_per_delivery: written ? perDelivery(written.transactions) : null,
        // The whole server's WAL: other databases' writes count too when the server is shared.
        wal_bytes_per_delivery: written ? Math.round(written.walBytes / deliveries) : null,
        // With pg_stat_statements preloaded: each statement's calls per delivery, rows per call, mean ms.
        db_statements_per_delivery: statements.length
          ? statements.map((w) => ({
              calls: perDelivery(w.calls),
              rows_per_call: Number((w.rows / w.calls).toFixed(1)),
              mean_ms: Number((w.ms / w.calls).toFixed(3)),
              query: w.query.replace(/\s+/g, " "),
            }))
          : null,
        herald_cpu_seconds_per_1000: heraldCpu,
        // The kernel's share (system time): socket writes and reads, with loopback delivery to the peer.
        herald_system_cpu_seconds_per_1000: per1000(sys1 - sys0),
        postgres_system_cpu_seconds_per_1000:
          pgCpu0 !== null && pgCpu1 !== null ? per1000(pgCpu1.system - pgCpu0.system) : null,
        // The same by what PostgreSQL's processes were doing: an autovacuum that falls inside the phase
        // moves the total by as much as everything else (it cleans up earlier writes too).
        postgres_cpu_seconds_per_1000_by_process:
          pgCpu0 !== null && pgCpu1 !== null
            ? Object.fromEntries(
                Object.entries(pgCpu1.byKind)
                  .map(([k, v]) => [k, per1000(v - pgCpu0.byKind[k as keyof typeof pgCpu0.byKind])] as const)
                  .filter(([, v]) => v > 0),
              )
            : null,
        ferretdb_cpu_seconds_per_1000: ferretCpu,
        postgres_cpu_seconds_per_1000: postgresCpu,
        herald_and_database_cpu_seconds_per_1000:
          store === "memory"
            ? heraldCpu
            : postgresCpu === null
              ? null
              : Number((heraldCpu + postgresCpu + (ferretCpu ?? 0)).toFixed(2)),
        machine_cpu_seconds: Number((dbCpu1.machine - dbCpu0.machine).toFixed(1)),
        machine_steal_seconds: Number((dbCpu1.steal - dbCpu0.steal).toFixed(1)),
        load_average_before: load0,
        load_average_after: load1,
      },
      latency: {
        rate_events_per_second: rate,
        seconds: RATE_SECONDS,
        deliveries: steadyReceipts.length,
        duplicates: steadyCheck.duplicates,
        p50_ms: pct(latencies, 50),
        p95_ms: pct(latencies, 95),
        p99_ms: pct(latencies, 99),
        max_ms: latencies[latencies.length - 1] ?? 0,
        publish_call_p50_ms: Number(pct(sorted(steadyCalls), 50).toFixed(1)),
        load_average_before: steadyLoad0,
        load_average_after: loads(),
      },
      peak_rss_mb: Math.round(Math.max(...servers.map((s) => peakRssMb(s.pid)))),
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await rx.close();
    await pg?.drop();
  }
}

type Result = Awaited<ReturnType<typeof runStore>>;

/**
 * Issue 16's targets for Herald on PostgreSQL, set for 2,000 events to 8 endpoints from 16 publishers
 * and a latency phase at 50 events/s; a run of another shape is compared all the same, and says so.
 */
function targetLines(r: Result): string[] {
  const t = r.throughput;
  const shape =
    t.events === 2_000 &&
    r.endpoints === 8 &&
    r.publish_concurrency === 16 &&
    r.latency.rate_events_per_second === 50
      ? ""
      : ` (the targets' shape is 2,000 events x 8 endpoints, 16 publishers, 50 events/s; this run: ${t.events} x ${r.endpoints}, ${r.publish_concurrency}, ${r.latency.rate_events_per_second}/s)`;
  const check = (ok: boolean | null) => (ok === null ? "n/a" : ok ? "met" : "MISSED");
  const cpu = t.herald_and_database_cpu_seconds_per_1000;
  return [
    `targets${shape}:`,
    `  Herald + PostgreSQL CPU s / 1,000 <= 0.25: ${cpu ?? "n/a"} ${check(cpu === null ? null : cpu <= 0.25)}`,
    `  deliveries/s >= 5,500: ${t.deliveries_per_second} ${check(t.deliveries_per_second >= 5_500)}`,
    `  publish call p50 <= 15 ms: ${t.publish_call_p50_ms} ms ${check(t.publish_call_p50_ms <= 15)}`,
    `  publish->receipt p95 <= 5 ms at the fixed rate: ${r.latency.p95_ms} ms ${check(r.latency.p95_ms <= 5)}`,
    `  nothing lost, nothing sent twice: ${t.duplicates + r.latency.duplicates} sent twice ${check(t.duplicates + r.latency.duplicates === 0)}`,
  ];
}

const machine = {
  cpus: cpus().length,
  cpu: cpus()[0]?.model,
  memory_gb: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  load_average_at_start: loads(),
};
console.log(
  `machine: ${machine.cpus} x ${machine.cpu}, ${machine.memory_gb} GiB, Node ${machine.node}, load average ${machine.load_average_at_start.join(" / ")} (1 / 5 / 15 min)`,
);

const runs: { store: Store; processes: number }[] = [{ store: "memory", processes: 1 }];
if (process.env.MONGODB_URI) for (const processes of PROCESS_COUNTS) runs.push({ store: "mongo", processes });
if (process.env.DATABASE_URL)
  for (const processes of PROCESS_COUNTS) runs.push({ store: "postgres", processes });
if (!process.env.MONGODB_URI && !process.env.DATABASE_URL)
  console.log("Neither DATABASE_URL nor MONGODB_URI is set: measuring the in-memory store only.");
const stores = (process.env.BENCH_STORES ?? "memory,mongo,postgres").split(",");

// BENCH_OTEL=1: every Herald process exports traces and metrics over OTLP/HTTP to a sink here (ADR 24).
// Its span queue is made large enough that no span is dropped, so the figure is the whole cost.
const otlpSink = process.env.BENCH_OTEL === "1" ? await startOtlpSink() : null;
if (otlpSink) {
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlpSink.endpoint;
  process.env.OTEL_BSP_MAX_QUEUE_SIZE ??= "131072";
  process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE ??= "2048";
  process.env.OTEL_BSP_SCHEDULE_DELAY ??= "1000";
  console.log(`OpenTelemetry on: traces and metrics exported over OTLP/HTTP to ${otlpSink.endpoint}`);
}

const results: Result[] = [];
for (const endpoints of ENDPOINT_COUNTS) {
  for (const { store, processes } of runs) {
    if (!stores.includes(store)) continue;
    console.log(
      `\n== ${store}, ${processes} process${processes > 1 ? "es" : ""}, ${endpoints} endpoints, ${PUBLISH_CONCURRENCY} publishers${PUBLISH_BATCH > 1 ? ` sending batches of ${PUBLISH_BATCH}` : ""}` +
        ` (HERALD_CONCURRENCY=${process.env.HERALD_CONCURRENCY ?? 200}, HERALD_ENDPOINT_CONCURRENCY=${process.env.HERALD_ENDPOINT_CONCURRENCY ?? 10})`,
    );
    const r = await runStore(store, endpoints, processes);
    results.push(r);
    const t = r.throughput;
    const l = r.latency;
    const byTable = t.db_rows_written_per_delivery_by_table;
    console.log(
      [
        `deliveries/s            ${t.deliveries_per_second}  (${t.deliveries} in ${t.seconds.toFixed(2)} s, publishing concurrently for ${t.publish_seconds.toFixed(2)} s; ${t.duplicates} sent twice)`,
        `drain deliveries/s      ${t.drain_deliveries_per_second ?? "n/a"}  (backlog after publishing stopped)`,
        `publish call p50        ${t.publish_call_p50_ms} ms (as fast as possible), ${l.publish_call_p50_ms} ms (at the fixed rate)`,
        `latency @${l.rate_events_per_second} events/s   p50 ${l.p50_ms} ms  p95 ${l.p95_ms} ms  p99 ${l.p99_ms} ms  max ${l.max_ms} ms  (${l.duplicates} sent twice; load ${l.load_average_before[0]} → ${l.load_average_after[0]})`,
        store === "postgres"
          ? `per delivery            ${t.db_round_trips_per_delivery ?? "n/a"} round trips (statements), ${t.db_rows_written_per_delivery ?? "n/a"} rows written, ${t.db_transactions_per_delivery ?? "n/a"} transactions, ${t.wal_bytes_per_delivery ?? "n/a"} WAL bytes`
          : `per delivery            ${t.db_round_trips_per_delivery ?? "n/a"} round trips, ${t.db_documents_written_per_delivery ?? "n/a"} documents written`,
        ...(t.db_round_trips_per_delivery_by_command
          ? [
              `round trips by command  ${Object.entries(t.db_round_trips_per_delivery_by_command)
                .map(([k, v]) => `${k} ${v}`)
                .join(", ")}`,
            ]
          : []),
        ...(byTable
          ? [
              `rows written by table   ${Object.entries(byTable)
                .map(([k, v]) => `${k} +${v.inserted} ~${v.updated} (HOT ${v.hot_updated}) -${v.deleted}`)
                .join(", ")}`,
            ]
          : []),
        ...(t.db_statements_per_delivery
          ? [
              "statements per delivery (pg_stat_statements; calls, rows per call, mean ms):",
              ...t.db_statements_per_delivery
                .filter((w) => w.calls >= 0.001)
                .slice(0, 12)
                .map((w) => `  ${w.calls}  ${w.rows_per_call}  ${w.mean_ms}  ${w.query.slice(0, 150)}`),
            ]
          : []),
        `CPU s per 1,000         Herald ${t.herald_cpu_seconds_per_1000} (system ${t.herald_system_cpu_seconds_per_1000}), FerretDB ${t.ferretdb_cpu_seconds_per_1000 ?? "n/a"}, PostgreSQL ${t.postgres_cpu_seconds_per_1000 ?? "n/a"}${t.postgres_system_cpu_seconds_per_1000 === null ? "" : ` (system ${t.postgres_system_cpu_seconds_per_1000})`}; together ${t.herald_and_database_cpu_seconds_per_1000 ?? "n/a"}`,
        ...(t.postgres_cpu_seconds_per_1000_by_process
          ? [
              `PostgreSQL by process   ${Object.entries(t.postgres_cpu_seconds_per_1000_by_process)
                .map(([k, v]) => `${k} ${v}`)
                .join(", ")}`,
            ]
          : []),
        `machine load            ${t.load_average_before.join(" / ")} → ${t.load_average_after.join(" / ")} (1 / 5 / 15 min, before → after the throughput phase); CPU ${t.machine_cpu_seconds} s busy, ${t.machine_steal_seconds} s of it stolen by the host`,
        `peak RSS (Herald)       ${r.peak_rss_mb} MiB`,
        ...(store === "postgres" ? targetLines(r) : []),
      ].join("\n"),
    );
  }
}

if (otlpSink) {
  const s = otlpSink.stats;
  console.log(
    `\nOTLP sink: ${s.traceExports} trace exports, ${s.metricExports} metric exports, ${(s.bytes / 1_048_576).toFixed(1)} MiB`,
  );
  await otlpSink.close();
}
const out = { at: new Date().toISOString(), machine, opentelemetry: otlpSink?.stats ?? null, results };
mkdirSync(join(ROOT, "bench/results"), { recursive: true });
const file = join(ROOT, "bench/results", `${out.at.replace(/[:.]/g, "-")}.json`);
writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
console.log(`\nwritten to ${file}`);
await agent.close();
