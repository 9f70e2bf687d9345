// npm run bench: starts a local receiver and Herald, publishes events fanned out to several endpoints,
// and prints deliveries per second, publish-to-receipt latency, database round trips per delivery and
// peak memory — for the in-memory store, and for MongoDB when MONGODB_URI is set. Figures go to
// bench/results/<timestamp>.json too.
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { Worker } from "node:worker_threads";
import { Agent, request } from "undici";

const ROOT = resolve(import.meta.dirname, "..");
/** Endpoint counts to measure, e.g. "1,8,64". */
const ENDPOINT_COUNTS = (process.env.BENCH_ENDPOINTS ?? "8").split(",").map(Number);
/** Herald process counts to measure on the database (the in-memory store is one process). */
const PROCESS_COUNTS = (process.env.BENCH_PROCESSES ?? "1,3").split(",").map(Number);
/** Deliveries per throughput phase; events are this divided by the endpoints (BENCH_EVENTS overrides). */
const DELIVERIES = {
  memory: Number(process.env.BENCH_DELIVERIES ?? 32_000),
  mongo: Number(process.env.BENCH_DB_DELIVERIES ?? 3_200),
};
/** Deliveries per second offered in the latency phase (events/s times endpoints). */
const RATE_DELIVERIES = {
  memory: Number(process.env.BENCH_RATE_DELIVERIES ?? 4_000),
  mongo: Number(process.env.BENCH_DB_RATE_DELIVERIES ?? 200),
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
  private constructor(
    private readonly worker: Worker,
    readonly port: number,
  ) {}

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

  async count(): Promise<number> {
    return (await this.ask<{ count: number }>("count", "count")).count;
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

async function startHerald(store: "memory" | "mongo", dbName: string): Promise<Server> {
  // BENCH_PROFILE=dir writes a V8 CPU profile of Herald there.
  const profile = process.env.BENCH_PROFILE
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
    : [];
  const child = spawn(
    process.execPath,
    [...profile, "--import", "tsx", join(ROOT, "bench/herald-server.ts")],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        HERALD_STORE: store,
        MONGODB_DB: dbName,
        HERALD_DATA_DIR: join(ROOT, ".herald-bench"),
        HERALD_ALLOW_HTTP_URLS: "true",
        HERALD_ALLOW_PRIVATE_NETWORKS: "true",
        // The benchmark publishes through one token at thousands per second.
        HERALD_RATE_LIMIT: "off",
        HERALD_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "silent",
        // Every process of a run issues its token for the same project: endpoints made through one are
        // the subscribers of events published through any of them.
        BENCH_TENANT_ID: `bench-${dbName}`,
        BENCH_PROJECT_ID: "bench",
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
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

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
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
function databaseCpu(): { ferretdb: number; postgres: number; machine: number } {
  const pids = databasePids();
  const sum = (xs: number[]) => xs.reduce((a, pid) => a + cpuSeconds(pid), 0);
  const stat = readFileSync("/proc/stat", "utf8").split("\n")[0]!.split(/\s+/).slice(1, 9).map(Number);
  const busy = stat.reduce((a, b) => a + b, 0) - (stat[3] ?? 0) - (stat[4] ?? 0);
  return { ferretdb: sum(pids.ferretdb), postgres: sum(pids.postgres), machine: busy / TICKS_PER_SECOND };
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
    const n = await rx.count();
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
 * alone could let duplicates hide a missing delivery.
 */
function checkComplete(phase: string, receipts: Receipt[], sent: Map<string, number>, endpoints: number) {
  const pairs = new Set<string>();
  for (const r of receipts) {
    if (!sent.has(r.id))
      throw new Error(`${phase}: the receiver got an event that was not published: ${r.id}`);
    pairs.add(`${r.id} ${r.path}`);
  }
  if (pairs.size !== sent.size * endpoints) {
    throw new Error(`${phase}: ${pairs.size} distinct deliveries arrived, ${sent.size * endpoints} expected`);
  }
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

async function runStore(store: "memory" | "mongo", endpoints: number, processes: number) {
  const events = Number(process.env.BENCH_EVENTS ?? Math.max(20, Math.round(DELIVERIES[store] / endpoints)));
  const rate = Math.max(1, Math.round(RATE_DELIVERIES[store] / endpoints));
  const rx = await Receiver.start();
  const dbName = `herald_bench_${Date.now()}`;
  const servers: Server[] = [];
  try {
    for (let p = 0; p < processes; p++) servers.push(await startHerald(store, dbName));
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
    if (processes > 1) await new Promise((r) => setTimeout(r, 3_000));
    await rx.take();

    // 1. Throughput: publish as fast as the API takes it, measure until the last delivery lands.
    const db0 = store === "mongo" ? await dbCounters(servers) : null;
    const cpu0 = servers.reduce((a, s) => a + cpuSeconds(s.pid), 0);
    const dbCpu0 = databaseCpu();
    const load0 = loadavg()[0]!;
    const sent = new Map<string, number>();
    const publishCalls: number[] = [];
    const t0 = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: PUBLISH_CONCURRENCY }, async () => {
        while (next < events) {
          const i = next++;
          await publish(via(i), 1_000 + i, sent, publishCalls);
        }
      }),
    );
    const publishedAt = Date.now();
    await waitForReceipts(s0, rx, events * endpoints, 600_000);
    const receipts = await rx.take();
    checkComplete("throughput", receipts, sent, endpoints);
    const t1 = Math.max(...receipts.map((r) => r.at));
    // Let the last results be written before counting.
    await new Promise((r) => setTimeout(r, 500));
    const db1 = store === "mongo" ? await dbCounters(servers) : null;
    const cpu1 = servers.reduce((a, s) => a + cpuSeconds(s.pid), 0);
    const dbCpu1 = databaseCpu();
    const deliveries = receipts.length;
    // Once publishing stops, what remains is pure dispatch: the backlog's drain rate.
    const drained = receipts.filter((r) => r.at > publishedAt).length;
    const drainRate = t1 > publishedAt ? Math.round(drained / ((t1 - publishedAt) / 1000)) : null;
    const perDelivery = (x: number) => Number((x / deliveries).toFixed(3));
    const per1000 = (x: number) => Number(((x / deliveries) * 1000).toFixed(2));

    // 2. Latency at a steady publish rate.
    const steady = new Map<string, number>();
    const steadyCalls: number[] = [];
    const total = rate * RATE_SECONDS;
    const start = Date.now();
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / rate;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inflight.push(publish(via(i), 100_000 + i, steady, steadyCalls));
    }
    await Promise.all(inflight);
    await waitForReceipts(s0, rx, total * endpoints, 300_000);
    const steadyReceipts = await rx.take();
    checkComplete("steady", steadyReceipts, steady, endpoints);
    const latencies = steadyReceipts.map((r) => r.at - steady.get(r.id)!).sort((a, b) => a - b);
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

    return {
      store,
      processes,
      endpoints,
      // The caps decide the ceiling: at most endpoints x per-endpoint requests are in flight.
      concurrency: Number(process.env.HERALD_CONCURRENCY ?? 200),
      endpoint_concurrency: Number(process.env.HERALD_ENDPOINT_CONCURRENCY ?? 10),
      throughput: {
        events,
        deliveries,
        publish_seconds: (publishedAt - t0) / 1000,
        seconds: (t1 - t0) / 1000,
        deliveries_per_second: Math.round(deliveries / ((t1 - t0) / 1000)),
        drain_deliveries_per_second: drainRate,
        publish_call_p50_ms: Number(pct(sorted(publishCalls), 50).toFixed(1)),
        db_round_trips_per_delivery: db0 && db1 ? perDelivery(db1.commands - db0.commands) : null,
        db_documents_written_per_delivery: db0 && db1 ? perDelivery(db1.written - db0.written) : null,
        db_round_trips_per_delivery_by_command:
          db0 && db1
            ? Object.fromEntries(
                Object.entries(db1.byCommand)
                  .map(([k, v]) => [k, perDelivery(v - (db0.byCommand[k] ?? 0))] as const)
                  .filter(([, v]) => v > 0),
              )
            : null,
        herald_cpu_seconds_per_1000: per1000(cpu1 - cpu0),
        // The database's processes on this machine, whoever made them work (other users included).
        ferretdb_cpu_seconds_per_1000: store === "mongo" ? per1000(dbCpu1.ferretdb - dbCpu0.ferretdb) : null,
        postgres_cpu_seconds_per_1000: store === "mongo" ? per1000(dbCpu1.postgres - dbCpu0.postgres) : null,
        machine_cpu_seconds: Number((dbCpu1.machine - dbCpu0.machine).toFixed(1)),
        load_average_before: Number(load0.toFixed(2)),
        load_average_after: Number(loadavg()[0]!.toFixed(2)),
      },
      latency: {
        rate_events_per_second: rate,
        seconds: RATE_SECONDS,
        deliveries: steadyReceipts.length,
        p50_ms: pct(latencies, 50),
        p95_ms: pct(latencies, 95),
        p99_ms: pct(latencies, 99),
        max_ms: latencies[latencies.length - 1] ?? 0,
        publish_call_p50_ms: Number(pct(sorted(steadyCalls), 50).toFixed(1)),
      },
      peak_rss_mb: Math.round(Math.max(...servers.map((s) => peakRssMb(s.pid)))),
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await rx.close();
  }
}

const runs: { store: "memory" | "mongo"; processes: number }[] = [{ store: "memory", processes: 1 }];
if (process.env.MONGODB_URI) for (const processes of PROCESS_COUNTS) runs.push({ store: "mongo", processes });
else console.log("MONGODB_URI is not set: measuring the in-memory store only.");
const stores = (process.env.BENCH_STORES ?? "memory,mongo").split(",");

const results = [];
for (const endpoints of ENDPOINT_COUNTS) {
  for (const { store, processes } of runs) {
    if (!stores.includes(store)) continue;
    console.log(
      `\n== ${store}, ${processes} process${processes > 1 ? "es" : ""}, ${endpoints} endpoints` +
        ` (HERALD_CONCURRENCY=${process.env.HERALD_CONCURRENCY ?? 200}, HERALD_ENDPOINT_CONCURRENCY=${process.env.HERALD_ENDPOINT_CONCURRENCY ?? 10})`,
    );
    const r = await runStore(store, endpoints, processes);
    results.push(r);
    const t = r.throughput;
    console.log(
      [
        `deliveries/s            ${t.deliveries_per_second}  (${t.deliveries} in ${t.seconds.toFixed(2)} s, publishing concurrently for ${t.publish_seconds.toFixed(2)} s)`,
        `drain deliveries/s      ${t.drain_deliveries_per_second ?? "n/a"}  (backlog after publishing stopped)`,
        `publish call p50        ${t.publish_call_p50_ms} ms (as fast as possible), ${r.latency.publish_call_p50_ms} ms (at the fixed rate)`,
        `latency @${r.latency.rate_events_per_second} events/s   p50 ${r.latency.p50_ms} ms  p95 ${r.latency.p95_ms} ms  p99 ${r.latency.p99_ms} ms  max ${r.latency.max_ms} ms`,
        `per delivery            ${t.db_round_trips_per_delivery ?? "n/a"} round trips, ${t.db_documents_written_per_delivery ?? "n/a"} documents written`,
        ...(t.db_round_trips_per_delivery_by_command
          ? [
              `round trips by command  ${Object.entries(t.db_round_trips_per_delivery_by_command)
                .map(([k, v]) => `${k} ${v}`)
                .join(", ")}`,
            ]
          : []),
        `CPU s per 1,000         Herald ${t.herald_cpu_seconds_per_1000}, FerretDB ${t.ferretdb_cpu_seconds_per_1000 ?? "n/a"}, PostgreSQL ${t.postgres_cpu_seconds_per_1000 ?? "n/a"} (machine load ${t.load_average_before} → ${t.load_average_after})`,
        `peak RSS (Herald)       ${r.peak_rss_mb} MiB`,
      ].join("\n"),
    );
  }
}

const out = {
  at: new Date().toISOString(),
  machine: {
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    memory_gb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  },
  results,
};
mkdirSync(join(ROOT, "bench/results"), { recursive: true });
const file = join(ROOT, "bench/results", `${out.at.replace(/[:.]/g, "-")}.json`);
writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
console.log(`\nwritten to ${file}`);
await agent.close();
