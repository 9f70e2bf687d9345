// `npm run bench -- --destination kafka` at a tiny size, so the destination mode of the benchmark cannot
// rot: the in-memory store, 8 Kafka endpoints on a broker the benchmark starts itself (scripts/kafka.sh)
// and consumes with its own consumer. It checks the figures are made and add up, not how good they are.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { BROKERS_REQUIRED } from "../support/broker-server.ts";
import { kafkaUnavailable } from "../support/kafka-server.ts";
import { PATIENCE_MS } from "../support/patience.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const missing = kafkaUnavailable();
if (missing && BROKERS_REQUIRED) throw new Error(`CI needs Kafka: ${missing}`);

function runBench(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((res) => {
    const { DATABASE_URL: _d, MONGODB_URI: _m, KAFKA_BROKERS: _k, ...env } = process.env;
    const child = spawn(process.execPath, ["bench/run.ts", ...args], {
      cwd: ROOT,
      env: {
        ...env,
        BENCH_STORES: "memory",
        BENCH_DELIVERIES: "160",
        BENCH_RATE: "5",
        BENCH_RATE_SECONDS: "2",
      },
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

describe.skipIf(missing)(`npm run bench -- --destination${missing ? ` (skipped: ${missing})` : ""}`, () => {
  it("starts Kafka, delivers to 8 topics, consumes everything and reports throughput, CPU and latency", async () => {
    const { code, out, err } = await runBench(["--destination", "kafka"]);
    expect(code, err).toBe(0);
    expect(out).toContain("to 8 kafka endpoints");
    expect(err).toContain("kafka.sh: Kafka");
    const file = /written to (\S+)/.exec(out)?.[1] ?? "";
    const [r] = JSON.parse(readFileSync(file, "utf8")).results;
    expect(r).toMatchObject({ store: "memory", destination: "kafka", endpoints: 8 });
    expect(r.throughput).toMatchObject({ events: 20, deliveries: 160, duplicates: 0 });
    expect(r.throughput.deliveries_per_second).toBeGreaterThan(0);
    expect(r.throughput.herald_cpu_seconds_per_1000).toBeGreaterThan(0);
    // The broker was the benchmark's own: its CPU is counted, and it was stopped after.
    expect(r.throughput.broker_cpu_seconds_per_1000).toBeGreaterThan(0);
    expect(r.latency).toMatchObject({ rate_events_per_second: 5, deliveries: 80, duplicates: 0 });
    expect(r.latency.p95_ms).toBeGreaterThan(0);
    expect(out).toMatch(/CPU s per 1,000 +Herald [\d.]+ \(system [\d.]+\), kafka [\d.]+/);
  });

  it("refuses a destination it does not know", async () => {
    const { code, err } = await runBench(["--destination", "pigeon"]);
    expect(code).not.toBe(0);
    expect(err).toContain("--destination must be one of https, kafka, rabbitmq, sqs, not pigeon");
  });
});
