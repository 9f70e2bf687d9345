import { type ChildProcess, spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import type { Consumed } from "./consumed.ts";
import { PATIENCE_MS } from "./patience.ts";

const ROOT = resolve(import.meta.dirname, "../..");

/** A running independent Kafka consumer (test/support/fixtures/KafkaTail.java) and what it has read. */
export interface KafkaTail {
  /** Every record read so far, in the order it was read. */
  readonly records: Consumed[];
  /** Stops the consumer (closes its standard input, then kills it if it lingers). */
  close(): Promise<void>;
}

/**
 * Starts Kafka's own Java consumer on `topics` of `brokers` (created when missing), from the start of
 * every partition; answers once its partitions are assigned, so nothing sent after is missed.
 */
export async function startKafkaTail(jars: string, brokers: string, topics: string[]): Promise<KafkaTail> {
  const file = join(ROOT, "test/support/fixtures/KafkaTail.java");
  const child: ChildProcess = spawn("java", ["-Xmx256m", "-cp", `${jars}/*`, file, brokers, ...topics], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const records: Consumed[] = [];
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr = (stderr + d).slice(-4_000);
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const ready = new Promise<void>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`KafkaTail not ready:\n${stderr}`)), PATIENCE_MS);
    child.once("exit", (code) => rej(new Error(`KafkaTail exited with ${code}:\n${stderr}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (!line.startsWith("{")) return;
      const r = JSON.parse(line) as {
        ready?: true;
        topic: string;
        partition: number;
        offset: number;
        key: string | null;
        value: string;
        headers: [string, string][];
        at: number;
      };
      if (r.ready) {
        clearTimeout(timer);
        res();
        return;
      }
      const text = (v: string) => Buffer.from(v, "base64").toString("utf8");
      records.push({
        destination: r.topic,
        key: r.key === null ? null : text(r.key),
        body: text(r.value),
        headers: Object.fromEntries(r.headers.map(([n, v]) => [n, text(v)])),
        place: { partition: r.partition, offset: String(r.offset) },
        at: r.at,
      });
    });
  });
  try {
    await ready;
  } catch (e) {
    child.kill("SIGKILL");
    throw e;
  }
  return {
    records,
    async close() {
      child.stdin?.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
