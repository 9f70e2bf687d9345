// bench/cluster.ts at a tiny size, so the cluster mode of the benchmark cannot rot: two Herald processes
// on the run's PostgreSQL, one killed with SIGKILL mid-run, short leases so its shards move within seconds.
// It checks the figures are made and add up, not how good they are (that is the benchmark's job).
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { PATIENCE_MS } from "../support/patience.ts";

const ROOT = resolve(import.meta.dirname, "../..");

function runCluster(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, ["bench/cluster.ts", ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 3 * PATIENCE_MS);
    child.on("exit", (code) => {
      clearTimeout(timer);
      res({ code, out, err });
    });
  });
}

describe.skipIf(!inject("postgresUrl"))("bench:cluster", () => {
  it("runs two processes, kills one mid-run, and reports gaps, latency, losses and costs", async () => {
    const env: NodeJS.ProcessEnv = {
      DATABASE_URL: inject("postgresUrl"),
      MONGODB_URI: "",
      // A lease of 2 s + 2 s: the killed process's shards are taken over within seconds.
      HERALD_LEASE_MARGIN: "2s",
      HERALD_DELIVERY_TIMEOUT: "2s",
    };
    const args = ["--processes", "2", "--endpoints", "3", "--rate", "5", "--seconds", "8", "--at", "2"];
    const { code, out, err } = await runCluster([...args, "--stop", "kill", "--wait", "120", "--json"], env);
    expect(err).not.toMatch(/Error/);
    expect(code).toBe(0);
    const r = JSON.parse(out.trim().split("\n").at(-1)!);
    expect(r).toMatchObject({ store: "postgres", processes: 2, endpoints: 3, stop: "kill", lost: 0 });
    expect(r.stopped_at_s).toBeGreaterThanOrEqual(1.5);
    expect(r.published + r.refused).toBe(40);
    expect(r.expected_pairs).toBe(r.published * 3);
    expect(r.gaps.map((g: { endpoint: string }) => g.endpoint)).toEqual(["ep0", "ep1", "ep2"]);
    for (const g of r.gaps) expect(g.longest_gap_ms).toBeGreaterThan(0);
    expect(r.p99_after_ms).toBeGreaterThan(0);
    expect(r.statements_per_delivery).toBeGreaterThan(0);
    expect(r.herald_cpu_s_per_1000).toBeGreaterThan(0);
  });

  it("sends every delivery exactly once with three processes passing work to each other (no stop)", async () => {
    // Each publish goes to one process; two thirds of its deliveries are another's, carried to it in the
    // publish's notification (ADR 30). A carried delivery taken twice, or one taken and never sent, shows.
    const env: NodeJS.ProcessEnv = { DATABASE_URL: inject("postgresUrl"), MONGODB_URI: "" };
    const args = ["--processes", "3", "--endpoints", "6", "--rate", "40", "--seconds", "6", "--stop", "none"];
    const { code, out, err } = await runCluster([...args, "--wait", "120", "--json"], env);
    expect(err).not.toMatch(/Error/);
    expect(code).toBe(0);
    const r = JSON.parse(out.trim().split("\n").at(-1)!);
    expect(r.published).toBeGreaterThan(0);
    expect(r).toMatchObject({ processes: 3, lost: 0, duplicated: 0, unanswered_deliveries: 0 });
    expect(r.expected_pairs).toBe(r.published * 6);
  });
});
