// npm run bench: starts a local receiver and Herald, publishes events fanned out to several endpoints,
// and prints deliveries per second, publish-to-receipt latency, database round trips per delivery and
// peak memory — for the in-memory store, for MongoDB when MONGODB_URI is set and for PostgreSQL when
// DATABASE_URL is set (each PostgreSQL run on a database of its own, created and dropped on that server).
// Figures go to bench/results/<timestamp>.json too. `--destination https|kafka|rabbitmq|sqs` makes the
// endpoints of that kind (bench/sinks.ts: the brokers and consumers) with the latency phase at 50 events/s.
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startOtlpSink } from "./otlp-sink.ts";
import { agent, type Store } from "./processes.ts";
import { PUBLISH_BATCH } from "./publish.ts";
import { printResult } from "./report.ts";
import { DESTINATIONS, type Destination } from "./sinks.ts";
import {
  ENDPOINT_COUNTS,
  loads,
  PROCESS_COUNTS,
  PUBLISH_CONCURRENCY,
  type Result,
  ROOT,
  runStore,
} from "./store-run.ts";

const { values: opt } = parseArgs({ options: { destination: { type: "string" } } });
const destination = (opt.destination ?? "https") as Destination;
if (!DESTINATIONS.includes(destination))
  throw new Error(`--destination must be one of ${DESTINATIONS.join(", ")}, not ${opt.destination}`);
// Issue 28 compares the kinds' publish-to-consume latency at 50 events/s (BENCH_RATE overrides it).
if (opt.destination) process.env.BENCH_RATE ??= "50";

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
      `\n== ${store}${opt.destination ? `, to ${endpoints} ${destination} endpoints` : ""}, ${processes} process${processes > 1 ? "es" : ""}, ${endpoints} endpoints, ${PUBLISH_CONCURRENCY} publishers${PUBLISH_BATCH > 1 ? ` sending batches of ${PUBLISH_BATCH}` : ""}` +
        ` (HERALD_CONCURRENCY=${process.env.HERALD_CONCURRENCY ?? 200}, HERALD_ENDPOINT_CONCURRENCY=${process.env.HERALD_ENDPOINT_CONCURRENCY ?? 10})`,
    );
    const r = await runStore(store, endpoints, processes, destination);
    results.push(r);
    printResult(store, r);
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
