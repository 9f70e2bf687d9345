import { Worker } from "node:worker_threads";
import type { TestTls } from "./tls.ts";

/** One request as the arrivals receiver saw it: when its headers had arrived (ms since the epoch). */
export interface Arrival {
  path: string;
  eventId: string;
  at: number;
  /** The signature verified with a secret given for its path. */
  verified: boolean;
}

export interface ArrivalsReceiver {
  /** https://127.0.0.1:<port> */
  url: string;
  /** Secrets to verify requests to `path` with. */
  trust(path: string, secret: string): Promise<void>;
  /** Every arrival so far, in order. */
  arrivals(): Promise<Arrival[]>;
  close(): Promise<void>;
}

/**
 * Starts test/support/arrivals-worker.mjs: an HTTPS receiver on 127.0.0.1 in a thread of its own, which
 * timestamps each arrival there, away from the test's busy thread.
 */
export async function startArrivalsReceiver(tls: TestTls): Promise<ArrivalsReceiver> {
  const worker = new Worker(new URL("./arrivals-worker.mjs", import.meta.url), {
    workerData: { cert: tls.cert, key: tls.key },
  });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once("error", reject);
    worker.once("message", (m: { port: number }) => resolve(m.port));
  });
  let next = 0;
  const ask = <T>(message: Record<string, unknown>): Promise<T> => {
    const id = next++;
    return new Promise((resolve) => {
      const on = (m: { id?: number } & T) => {
        if (m.id !== id) return;
        worker.off("message", on);
        resolve(m);
      };
      worker.on("message", on);
      worker.postMessage({ ...message, id });
    });
  };
  return {
    url: `https://127.0.0.1:${port}`,
    async trust(path, secret) {
      await ask({ type: "secret", path, secret });
    },
    async arrivals() {
      return (await ask<{ arrivals: Arrival[] }>({ type: "take" })).arrivals;
    },
    async close() {
      await ask({ type: "close" });
      await worker.terminate();
    },
  };
}
