// How bench/run.ts prints one run's figures, and issue 16's targets beside PostgreSQL's.
import type { Result } from "./store-run.ts";

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

/** Prints the figures of one run (`store`), in the order the README's tables use. */
export function printResult(store: string, r: Result): void {
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
      `CPU s per 1,000         Herald ${t.herald_cpu_seconds_per_1000} (system ${t.herald_system_cpu_seconds_per_1000}), ${r.destination === "https" ? "" : `${r.destination} ${t.broker_cpu_seconds_per_1000}, `}FerretDB ${t.ferretdb_cpu_seconds_per_1000 ?? "n/a"}, PostgreSQL ${t.postgres_cpu_seconds_per_1000 ?? "n/a"}${t.postgres_system_cpu_seconds_per_1000 === null ? "" : ` (system ${t.postgres_system_cpu_seconds_per_1000})`}; together ${t.herald_and_database_cpu_seconds_per_1000 ?? "n/a"}`,
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
