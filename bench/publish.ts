// How bench/store-run.ts publishes: one event per POST /api/v1/events, or batches (BENCH_PUBLISH_BATCH),
// noting when each accepted event was sent so its receipt gives the publish-to-receipt latency.
import { call, EVENT_TYPE, eventData, type Server } from "./processes.ts";

export async function publish(s: Server, i: number, sent: Map<string, number>, calls?: number[]) {
  const start = performance.now();
  const startedAt = Date.now();
  const r = (await call(s, "POST", "/api/v1/events", { type: EVENT_TYPE, data: eventData(i) })) as {
    id: string;
  };
  calls?.push(performance.now() - start);
  sent.set(r.id, startedAt);
}

/**
 * BENCH_PUBLISH_BATCH=N: the throughput phase publishes N events per POST /api/v1/events/batch (1 to 100)
 * instead of one per POST /api/v1/events; the publish call figures are then per batch call.
 */
export const PUBLISH_BATCH = Number(process.env.BENCH_PUBLISH_BATCH ?? 1);
if (!Number.isInteger(PUBLISH_BATCH) || PUBLISH_BATCH < 1 || PUBLISH_BATCH > 100)
  throw new Error("BENCH_PUBLISH_BATCH must be a whole number from 1 to 100");

/** Publishes the events `indices` in one batch call; every one must be accepted. */
export async function publishBatch(
  s: Server,
  indices: number[],
  sent: Map<string, number>,
  calls?: number[],
) {
  const start = performance.now();
  const startedAt = Date.now();
  const r = (await call(s, "POST", "/api/v1/events/batch", {
    events: indices.map((i) => ({ type: EVENT_TYPE, data: eventData(i) })),
  })) as { data: { status: number; event?: { id: string }; problem?: unknown }[] };
  calls?.push(performance.now() - start);
  for (const item of r.data) {
    if (item.status !== 202 || !item.event)
      throw new Error(`a batch item was refused: ${JSON.stringify(item)}`);
    sent.set(item.event.id, startedAt);
  }
}
