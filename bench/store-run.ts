// One run of `npm run bench` (bench/run.ts): one store, one fan-out, one or more Herald processes.
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { checkComplete, databaseCpu, pct, peakRssMb, waitForReceipts } from "./checks.ts";
import {
  BenchDatabase,
  type PostgresCounters,
  type StatementWork,
  statementsBetween,
  writesBetween,
} from "./postgres.ts";
import {
  call,
  cpuSeconds,
  dbCounters,
  EVENT_TYPE,
  type Server,
  type Store,
  startHerald,
} from "./processes.ts";
import { PUBLISH_BATCH, publish, publishBatch } from "./publish.ts";
import { type Destination, startSink } from "./sinks.ts";

export const ROOT = resolve(import.meta.dirname, "..");
/** Endpoint counts to measure, e.g. "1,8,64". */
export const ENDPOINT_COUNTS = (process.env.BENCH_ENDPOINTS ?? "8").split(",").map(Number);
/** Herald process counts to measure on the database (the in-memory store is one process). */
export const PROCESS_COUNTS = (process.env.BENCH_PROCESSES ?? "1,3").split(",").map(Number);
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
export const PUBLISH_CONCURRENCY = Number(process.env.BENCH_PUBLISH_CONCURRENCY ?? 64);

/** Events per second offered in the latency phase, for every store (else from RATE_DELIVERIES); read per run. */
const rateEvents = () => (process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : null);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
export const loads = () => loadavg().map((l) => Number(l.toFixed(2)));

export async function runStore(
  store: Store,
  endpoints: number,
  processes: number,
  to: Destination = "https",
) {
  const events = Number(process.env.BENCH_EVENTS ?? Math.max(20, Math.round(DELIVERIES[store] / endpoints)));
  const rate = rateEvents() ?? Math.max(1, Math.round(RATE_DELIVERIES[store] / endpoints));
  const rx = await startSink(to, endpoints);
  const dbName = `herald_bench_${Date.now()}`;
  let pg: BenchDatabase | null = null;
  const servers: Server[] = [];
  try {
    if (store === "postgres") pg = await BenchDatabase.create(process.env.DATABASE_URL!, dbName);
    for (let p = 0; p < processes; p++) servers.push(await startHerald(store, dbName, pg?.url ?? null));
    const s0 = servers[0]!;
    const via = (i: number) => servers[i % servers.length]!;
    for (let e = 0; e < endpoints; e++) {
      await call(s0, "POST", "/api/v1/webhooks", rx.endpoint(e, EVENT_TYPE));
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
    const broker0 = rx.brokerCpu();
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
    const broker1 = rx.brokerCpu();
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
      destination: to,
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
        // The broker's processes, when this run started it (bench/sinks.ts); 0 otherwise.
        broker_cpu_seconds_per_1000: per1000(broker1 - broker0),
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

export type Result = Awaited<ReturnType<typeof runStore>>;
