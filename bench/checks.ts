// What bench/run.ts reads about a run besides Herald's answers: the database's and the machine's CPU from
// /proc, Herald's peak memory, and whether every (event, endpoint) pair arrived.
import { readdirSync, readFileSync } from "node:fs";
import { call, cpuSeconds, type Receipt, type Server } from "./processes.ts";

const TICKS_PER_SECOND = 100;

/** The database server's processes on this machine (FerretDB's and PostgreSQL's), by name. */
export function databasePids(): { ferretdb: number[]; postgres: number[] } {
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
export function databaseCpu(): { ferretdb: number; postgres: number; machine: number; steal: number } {
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

export function peakRssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return Number.NaN;
  }
}

export const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** What Herald recorded for every endpoint, by status and error: printed when deliveries go missing. */
export async function recordedOutcomes(s: Server): Promise<Record<string, number>> {
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

export async function waitForReceipts(
  s: Server,
  rx: { count(): Promise<{ distinct: number }> },
  expected: number,
  timeoutMs: number,
) {
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
export function checkComplete(
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
