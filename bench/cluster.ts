// npm run bench:cluster: N Herald processes on one database (PostgreSQL at DATABASE_URL, else MongoDB at
// MONGODB_URI), events published at a fixed rate round-robin to the live processes, and one process
// killed (SIGKILL), stopped (SIGTERM) or left alone mid-run. It prints, for each endpoint, the longest
// gap between deliveries; publish→receipt p50/p99 before and after the stop; the (event, endpoint) pairs
// lost and delivered twice; and the statements and CPU (Herald + PostgreSQL) per delivery. Options:
//   --processes N (3)  --rate EVENTS_PER_S (20)  --seconds S (30)  --endpoints E (8)
//   --stop kill|term|none (kill)  --at S (a third of --seconds)  --wait S (150: how long stragglers may take)
//   --warmup S (0: publishing at the rate for S seconds before the clock starts, not counted: each
//   process's JIT warms on its own share, so a short run of N processes counts N warm-ups)
//   --json (print the figures as one JSON object only)
// A run at 1 and one at 3 processes with --stop none give the per-delivery costs of scale-out alone.
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { MongoClient } from "mongodb";
import { BenchDatabase, type StatementWork, statementsBetween } from "./postgres.ts";
import {
  agent,
  call,
  cpuSeconds,
  dbCounters,
  EVENT_TYPE,
  eventData,
  type Receipt,
  Receiver,
  type Server,
  type Store,
  startHerald,
} from "./processes.ts";

const { values: opt } = parseArgs({
  options: {
    processes: { type: "string", default: "3" },
    rate: { type: "string", default: "20" },
    seconds: { type: "string", default: "30" },
    endpoints: { type: "string", default: "8" },
    stop: { type: "string", default: "kill" },
    at: { type: "string" },
    wait: { type: "string", default: "150" },
    warmup: { type: "string", default: "0" },
    json: { type: "boolean", default: false },
  },
});
const num = (name: string, v: string | undefined, min: number) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}, not ${v}`);
  return n;
};
const processes = num("processes", opt.processes, 1);
const rate = num("rate", opt.rate, 0.1);
const seconds = num("seconds", opt.seconds, 1);
const endpoints = num("endpoints", opt.endpoints, 1);
const waitSeconds = num("wait", opt.wait, 1);
const warmupSeconds = num("warmup", opt.warmup, 0);
const stopAt = num("at", opt.at ?? String(seconds / 3), 0) * 1000;
const stop = opt.stop as "kill" | "term" | "none";
if (!["kill", "term", "none"].includes(stop)) throw new Error("--stop must be kill, term or none");
if (stop !== "none" && processes < 2) throw new Error("--stop needs at least two processes");
const store: Store = process.env.DATABASE_URL ? "postgres" : process.env.MONGODB_URI ? "mongo" : "memory";
if (store === "memory") throw new Error("bench:cluster needs DATABASE_URL or MONGODB_URI");

const say = (line: string) => {
  if (!opt.json) console.log(line);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const loads = () => loadavg().map((l) => Number(l.toFixed(2)));

/** Shards each process owns now (herald_shards_owned), in the order of `servers`. */
async function shardsOwned(servers: Server[]): Promise<number[]> {
  return Promise.all(
    servers.map(async (s) => {
      const text = (await call(s, "GET", "/metrics")) as string;
      return Number(/^herald_shards_owned (\d+)/m.exec(text)?.[1] ?? 0);
    }),
  );
}

/** Statements sent so far: pg_stat_statements when the server records them (by statement too), else Herald's count. */
async function statementCount(
  pg: BenchDatabase | null,
  servers: Server[],
): Promise<{ total: number; each: Map<string, StatementWork> }> {
  if (!pg?.statementsRecorded) return { total: (await dbCounters(servers)).commands, each: new Map() };
  const each = await pg.statements();
  return { total: [...each.values()].reduce((a, w) => a + w.calls, 0), each };
}

const rx = await Receiver.start();
const dbName = `herald_cluster_${Date.now()}`;
const pg = store === "postgres" ? await BenchDatabase.create(process.env.DATABASE_URL!, dbName) : null;
const servers: Server[] = [];
try {
  say(
    `load average ${loads().join(" / ")}; ${processes} Herald processes on ${store}, ${endpoints} endpoints`,
  );
  for (let p = 0; p < processes; p++) servers.push(await startHerald(store, dbName, pg?.url ?? null));
  const s0 = servers[0]!;
  for (let e = 0; e < endpoints; e++)
    await call(s0, "POST", "/api/v1/webhooks", {
      url: `http://127.0.0.1:${rx.port}/ep${e}`,
      events: [EVENT_TYPE],
    });
  // Every process owns its share before the clock starts, and has seen the endpoints (their cache).
  for (const deadline = Date.now() + 120_000; ; await sleep(250)) {
    const owned = await shardsOwned(servers);
    if (owned.every((n) => n > 0) && owned.reduce((a, b) => a + b, 0) === 256) break;
    if (Date.now() > deadline) throw new Error(`shards never settled: ${owned.join(", ")}`);
  }
  await sleep(1_500);
  // Warm-up: the same publishing, not counted; its deliveries are awaited and dropped.
  const warm = Math.round(rate * warmupSeconds);
  for (let i = 0, w0 = Date.now(); i < warm; i++) {
    const wait = w0 + (i * 1000) / rate - Date.now();
    if (wait > 0) await sleep(wait);
    void call(servers[i % servers.length]!, "POST", "/api/v1/events", {
      type: EVENT_TYPE,
      data: eventData(i),
    }).catch(() => {});
  }
  for (const deadline = Date.now() + 60_000; warm > 0 && Date.now() < deadline; await sleep(100))
    if ((await rx.count()).distinct >= warm * endpoints) break;
  if (warm > 0) await sleep(1_000);
  await rx.take();

  const victim = stop === "none" ? null : servers[servers.length - 1]!;
  const sent = new Map<string, number>();
  let refused = 0;
  const statements0 = await statementCount(pg, servers);
  const pgCpu0 = pg?.cpuSeconds()?.total ?? null;
  const cpu0 = servers.reduce((a, s) => a + cpuSeconds(s.pid), 0);
  let victimCpu = 0;
  let victimStatements = 0;
  let stoppedAt: number | null = null;
  let stopping: Promise<void> = Promise.resolve();
  const load0 = loads();
  const t0 = Date.now();
  const total = Math.round(rate * seconds);
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    if (victim && stoppedAt === null && due - t0 >= stopAt) {
      // The victim's CPU and commands end here; a kill takes its /proc entry and /metrics with it.
      victimCpu = cpuSeconds(victim.pid);
      if (!pg?.statementsRecorded)
        victimStatements = (await dbCounters([victim]).catch(() => null))?.commands ?? 0;
      stoppedAt = Date.now();
      say(
        `${Math.round((stoppedAt - t0) / 1000)} s: ${stop === "kill" ? "SIGKILL" : "SIGTERM"} to process ${servers.length} (pid ${victim.pid})`,
      );
      stopping = victim.kill(stop === "kill" ? "SIGKILL" : "SIGTERM");
    }
    const live = stoppedAt === null ? servers : servers.filter((s) => s !== victim);
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    const startedAt = Date.now();
    inflight.push(
      call(live[i % live.length]!, "POST", "/api/v1/events", { type: EVENT_TYPE, data: eventData(i) }).then(
        (r) => void sent.set((r as { id: string }).id, startedAt),
        // Not accepted (the process died under the call): the publisher knows, nothing was promised.
        () => void refused++,
      ),
    );
  }
  await Promise.all(inflight);
  await stopping;
  const publishedAt = Date.now();
  const expected = sent.size * endpoints;
  for (const deadline = Date.now() + waitSeconds * 1000; ; await sleep(100)) {
    const { distinct } = await rx.count();
    if (distinct >= expected || Date.now() > deadline) break;
  }
  await sleep(1_000); // anything sent twice lands too
  const survivors = servers.filter((s) => s !== victim);
  const cpu1 = survivors.reduce((a, s) => a + cpuSeconds(s.pid), 0) + victimCpu;
  const pgCpu1 = pg?.cpuSeconds()?.total ?? null;
  const statements1 = await statementCount(pg, survivors);
  const receipts: Receipt[] = await rx.take();

  // Pairs: first arrival of each (event, endpoint); arrivals of unknown ids were published by a call
  // that got no answer (the victim died under it), accepted or not.
  const first = new Map<string, Receipt>();
  let unanswered = 0;
  for (const r of receipts) {
    if (!sent.has(r.id)) {
      unanswered++;
      continue;
    }
    const k = `${r.id} ${r.path}`;
    if (!first.has(k)) first.set(k, r);
  }
  const duplicates = receipts.length - unanswered - first.size;
  const lost = expected - first.size;
  const after = (r: Receipt) => stoppedAt !== null && sent.get(r.id)! >= stoppedAt;
  const latency = (rs: Receipt[]) => rs.map((r) => r.at - sent.get(r.id)!);
  const firsts = [...first.values()];
  const byEndpoint = new Map<string, number[]>();
  for (const r of receipts) byEndpoint.set(r.path, [...(byEndpoint.get(r.path) ?? []), r.at]);
  const gaps = [...byEndpoint.entries()]
    .sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true }))
    .map(([path, ats]) => {
      ats.sort((a, b) => a - b);
      // An endpoint that got nothing since some moment before publishing ended: that silence is a gap too.
      if (ats[ats.length - 1]! < publishedAt) ats.push(publishedAt);
      let gap = 0;
      let from = t0;
      for (let k = 1; k < ats.length; k++)
        if (ats[k]! - ats[k - 1]! > gap) [gap, from] = [ats[k]! - ats[k - 1]!, ats[k - 1]!];
      return {
        endpoint: path.slice(1),
        longest_gap_ms: gap,
        gap_from_s: Number(((from - t0) / 1000).toFixed(1)),
      };
    });
  const deliveries = firsts.length;
  const result = {
    store,
    processes,
    endpoints,
    rate_events_per_second: rate,
    seconds,
    stop,
    stopped_at_s: stoppedAt === null ? null : Number(((stoppedAt - t0) / 1000).toFixed(1)),
    published: sent.size,
    refused,
    unanswered_deliveries: unanswered,
    expected_pairs: expected,
    lost,
    duplicated: duplicates,
    drained_s: Number(((Math.max(publishedAt, ...firsts.map((r) => r.at)) - publishedAt) / 1000).toFixed(1)),
    p50_before_ms: pct(latency(firsts.filter((r) => !after(r))), 50),
    p95_before_ms: pct(latency(firsts.filter((r) => !after(r))), 95),
    p99_before_ms: pct(latency(firsts.filter((r) => !after(r))), 99),
    p50_after_ms: stoppedAt === null ? null : pct(latency(firsts.filter(after)), 50),
    p99_after_ms: stoppedAt === null ? null : pct(latency(firsts.filter(after)), 99),
    max_ms: pct(latency(firsts), 100),
    gaps,
    statements_per_delivery: deliveries
      ? Number(((statements1.total + victimStatements - statements0.total) / deliveries).toFixed(3))
      : null,
    statements_source: pg?.statementsRecorded ? "pg_stat_statements" : "herald_db_commands_total",
    // The statements that make up most of it: calls per delivery, rows per call, the statement's start.
    statements_by_kind: statementsBetween(statements0.each, statements1.each)
      .slice(0, 10)
      .map((w) => ({
        calls: Number((w.calls / Math.max(1, deliveries)).toFixed(4)),
        rows_per_call: Number((w.rows / w.calls).toFixed(1)),
        mean_ms: Number((w.ms / w.calls).toFixed(3)),
        query: w.query.replace(/\s+/g, " ").slice(0, 90),
      })),
    herald_cpu_s_per_1000: deliveries ? Number((((cpu1 - cpu0) / deliveries) * 1000).toFixed(3)) : null,
    postgres_cpu_s_per_1000:
      deliveries && pgCpu0 !== null && pgCpu1 !== null
        ? Number((((pgCpu1 - pgCpu0) / deliveries) * 1000).toFixed(3))
        : null,
    load_average_before: load0,
    load_average_after: loads(),
  };
  if (opt.json) console.log(JSON.stringify(result));
  else {
    say(
      `published ${result.published} (${refused} refused), ${deliveries} of ${expected} pairs delivered: lost ${lost}, duplicated ${duplicates}, unanswered publishes' deliveries ${unanswered}`,
    );
    say(
      `publish→receipt p50 / p95 / p99: before the stop ${result.p50_before_ms} / ${result.p95_before_ms} / ${result.p99_before_ms} ms; after ${result.p50_after_ms ?? "-"} / ${result.p99_after_ms ?? "-"} ms; max ${result.max_ms} ms`,
    );
    for (const g of gaps)
      say(`  ${g.endpoint.padEnd(6)} longest gap ${g.longest_gap_ms} ms (from ${g.gap_from_s} s)`);
    say(
      `per delivery: ${result.statements_per_delivery} statements (${result.statements_source}); CPU s per 1,000: Herald ${result.herald_cpu_s_per_1000}, PostgreSQL ${result.postgres_cpu_s_per_1000 ?? "n/a"}`,
    );
    for (const w of result.statements_by_kind)
      say(`  ${w.calls}  ${w.rows_per_call}  ${w.mean_ms} ms  ${w.query}`);
    say(`load average ${load0.join(" / ")} → ${result.load_average_after.join(" / ")}`);
  }
  if (lost > 0) process.exitCode = 1;
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  await rx.close();
  await pg?.drop();
  if (store === "mongo") {
    const client = new MongoClient(process.env.MONGODB_URI!);
    await client
      .db(dbName)
      .dropDatabase()
      .finally(() => client.close());
  }
  await agent.close();
}
