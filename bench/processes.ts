// The processes of a benchmark run: the receiver (a thread of this process), Herald processes on a store,
// the HTTP calls made to them, and the CPU time /proc counts for a process. Shared by bench/run.ts and
// bench/cluster.ts.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { Worker } from "node:worker_threads";
import { Agent, request } from "undici";

export type Store = "memory" | "mongo" | "postgres";

const ROOT = resolve(import.meta.dirname, "..");
const TICKS_PER_SECOND = 100;
export const EVENT_TYPE = "message.delivered";

export interface Receipt {
  id: string;
  path: string;
  at: number;
}

export class Receiver {
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

export interface Server {
  base: string;
  token: string;
  pid: number;
  /** Stops the process (SIGTERM) and waits for its exit. */
  stop(): Promise<void>;
  /** Sends `signal` (SIGKILL: a crash) and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** Herald's environment for `store`: only that store's variable, so a bench given both URLs can run both. */
export function storeEnv(store: Store, dbName: string, databaseUrl: string | null): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HERALD_STORE: store };
  delete env.DATABASE_URL;
  delete env.MONGODB_URI;
  if (store === "mongo") Object.assign(env, { MONGODB_URI: process.env.MONGODB_URI, MONGODB_DB: dbName });
  if (store === "postgres") env.DATABASE_URL = databaseUrl ?? "";
  return env;
}

export async function startHerald(store: Store, dbName: string, databaseUrl: string | null): Promise<Server> {
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
  const kill = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill(signal);
    await exited;
  };
  return { base: `http://127.0.0.1:${port}`, token, pid: child.pid!, stop: () => kill("SIGTERM"), kill };
}

export const agent = new Agent({ connections: 128, pipelining: 1 });

export async function call(s: Server, method: string, path: string, body?: unknown): Promise<unknown> {
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

export function eventData(i: number) {
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
export async function dbCounters(
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
export function cpuSeconds(pid: number, only: "all" | "system" = "all"): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((only === "all" ? Number(fields[11]) : 0) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}
