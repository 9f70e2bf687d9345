// npm run bench: starts a local receiver and Herald, publishes events fanned out to several endpoints,
// and prints deliveries per second, publish-to-receipt latency, database round trips per delivery and
// peak memory — for the in-memory store, and for MongoDB when MONGODB_URI is set. Figures go to
// bench/results/<timestamp>.json too.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { Worker } from "node:worker_threads";
import { Agent, request } from "undici";

const ROOT = resolve(import.meta.dirname, "..");
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 8);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 4_000);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 10);
const PUBLISH_CONCURRENCY = Number(process.env.BENCH_PUBLISH_CONCURRENCY ?? 64);
const EVENT_TYPE = "message.delivered";

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

async function startHerald(store: "memory" | "mongo"): Promise<Server> {
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
        MONGODB_DB: `herald_bench_${Date.now()}`,
        HERALD_DATA_DIR: join(ROOT, ".herald-bench"),
        HERALD_ALLOW_HTTP_URLS: "true",
        HERALD_ALLOW_PRIVATE_NETWORKS: "true",
        // The benchmark publishes through one token at thousands per second.
        HERALD_RATE_LIMIT: "off",
        HERALD_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "silent",
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

async function dbCommands(s: Server): Promise<number> {
  const text = (await call(s, "GET", "/metrics")) as string;
  return Number(/^herald_db_commands_total (\d+)/m.exec(text)?.[1] ?? 0);
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

async function publish(s: Server, i: number, sent: Map<string, number>) {
  const start = Date.now();
  const r = (await call(s, "POST", "/api/v1/events", { type: EVENT_TYPE, data: eventData(i) })) as {
    id: string;
  };
  sent.set(r.id, start);
}

async function runStore(store: "memory" | "mongo") {
  const rx = await Receiver.start();
  const s = await startHerald(store);
  try {
    for (let e = 0; e < ENDPOINTS; e++) {
      await call(s, "POST", "/api/v1/webhooks", {
        url: `http://127.0.0.1:${rx.port}/ep${e}`,
        events: [EVENT_TYPE],
      });
    }
    // Warm-up: connections, JIT, indexes.
    const warm = new Map<string, number>();
    await Promise.all(Array.from({ length: 50 }, (_, i) => publish(s, i, warm)));
    await waitForReceipts(s, rx, 50 * ENDPOINTS, 60_000);
    await rx.take();

    // 1. Throughput: publish as fast as the API takes it, measure until the last delivery lands.
    const cmd0 = await dbCommands(s);
    const sent = new Map<string, number>();
    const t0 = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: PUBLISH_CONCURRENCY }, async () => {
        while (next < EVENTS) await publish(s, 1_000 + next++, sent);
      }),
    );
    const publishedAt = Date.now();
    await waitForReceipts(s, rx, EVENTS * ENDPOINTS, 300_000);
    const receipts = await rx.take();
    checkComplete("throughput", receipts, sent, ENDPOINTS);
    const t1 = Math.max(...receipts.map((r) => r.at));
    // Let the last results be written before counting round trips.
    await new Promise((r) => setTimeout(r, 300));
    const cmd1 = await dbCommands(s);
    const deliveries = receipts.length;
    // Once publishing stops, what remains is pure dispatch: the backlog's drain rate.
    const drained = receipts.filter((r) => r.at > publishedAt).length;
    const drainRate = t1 > publishedAt ? Math.round(drained / ((t1 - publishedAt) / 1000)) : null;

    // 2. Latency at a steady publish rate.
    const steady = new Map<string, number>();
    const total = RATE * RATE_SECONDS;
    const start = Date.now();
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / RATE;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inflight.push(publish(s, 100_000 + i, steady));
    }
    await Promise.all(inflight);
    await waitForReceipts(s, rx, total * ENDPOINTS, 120_000);
    const steadyReceipts = await rx.take();
    checkComplete("steady", steadyReceipts, steady, ENDPOINTS);
    const latencies = steadyReceipts.map((r) => r.at - steady.get(r.id)!).sort((a, b) => a - b);

    return {
      store,
      endpoints: ENDPOINTS,
      // The caps decide the ceiling: at most endpoints x per-endpoint requests are in flight.
      concurrency: Number(process.env.HERALD_CONCURRENCY ?? 200),
      endpoint_concurrency: Number(process.env.HERALD_ENDPOINT_CONCURRENCY ?? 10),
      throughput: {
        events: EVENTS,
        deliveries,
        publish_seconds: (publishedAt - t0) / 1000,
        seconds: (t1 - t0) / 1000,
        deliveries_per_second: Math.round(deliveries / ((t1 - t0) / 1000)),
        drain_deliveries_per_second: drainRate,
        db_round_trips_per_delivery:
          store === "mongo" ? Number(((cmd1 - cmd0) / deliveries).toFixed(3)) : null,
      },
      latency: {
        rate_events_per_second: RATE,
        seconds: RATE_SECONDS,
        deliveries: steadyReceipts.length,
        p50_ms: pct(latencies, 50),
        p95_ms: pct(latencies, 95),
        p99_ms: pct(latencies, 99),
        max_ms: latencies[latencies.length - 1] ?? 0,
      },
      peak_rss_mb: Math.round(peakRssMb(s.pid)),
    };
  } finally {
    await s.stop();
    await rx.close();
  }
}

const stores: ("memory" | "mongo")[] = ["memory"];
if (process.env.MONGODB_URI) stores.push("mongo");
else console.log("MONGODB_URI is not set: measuring the in-memory store only.");

const results = [];
for (const store of stores) {
  console.log(
    `\n== ${store}: ${EVENTS} events x ${ENDPOINTS} endpoints, then ${RATE} events/s for ${RATE_SECONDS} s` +
      ` (HERALD_CONCURRENCY=${process.env.HERALD_CONCURRENCY ?? 200}, HERALD_ENDPOINT_CONCURRENCY=${process.env.HERALD_ENDPOINT_CONCURRENCY ?? 10})`,
  );
  const r = await runStore(store);
  results.push(r);
  console.log(
    [
      `deliveries/s            ${r.throughput.deliveries_per_second}  (${r.throughput.deliveries} in ${r.throughput.seconds.toFixed(2)} s, publishing concurrently for ${r.throughput.publish_seconds.toFixed(2)} s)`,
      `drain deliveries/s      ${r.throughput.drain_deliveries_per_second ?? "n/a"}  (backlog after publishing stopped)`,
      `db round trips/delivery ${r.throughput.db_round_trips_per_delivery ?? "n/a (no database)"}`,
      `latency @${RATE}/s         p50 ${r.latency.p50_ms} ms  p95 ${r.latency.p95_ms} ms  p99 ${r.latency.p99_ms} ms  max ${r.latency.max_ms} ms`,
      `peak RSS (Herald)       ${r.peak_rss_mb} MiB`,
    ].join("\n"),
  );
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
