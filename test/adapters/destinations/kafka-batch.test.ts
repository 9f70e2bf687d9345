import { setImmediate as nextTurn } from "node:timers/promises";
import type { Message, RecordMetadata } from "kafkajs";
import { describe, expect, it } from "vitest";
import { BATCH_RECORDS, KafkaBatcher, type Produce } from "../../../src/adapters/destinations/kafka-batch.ts";

// The Kafka sender's batching (ADR 27): a lone record goes once the turn that queued it ends; records
// queued in the same turn go together; records that arrive while a request is in flight go together in
// the next; each gets its own partition and offset; a failure over size never fails another record.

/** A broker double: partition by the key's first character, offsets counted per partition; `gate` holds requests. */
function broker(opts: { tooLargeAbove?: number; fail?: Error } = {}) {
  const requests: string[][] = [];
  const next = new Map<number, number>();
  const chosen = new WeakMap<Message, number>();
  let release: (() => void) | null = null;
  let held = false;
  const produce: Produce = async (messages) => {
    requests.push(messages.map((m) => String(m.value)));
    if (held) await new Promise<void>((r) => (release = r));
    if (opts.fail) throw opts.fail;
    const total = messages.reduce((n, m) => n + String(m.value).length, 0);
    if (opts.tooLargeAbove !== undefined && total > opts.tooLargeAbove) throw new Error("too large");
    const counts = new Map<number, number>();
    for (const m of messages) {
      const p = String(m.key).charCodeAt(0) % 2;
      chosen.set(m, p);
      counts.set(p, (counts.get(p) ?? 0) + 1);
    }
    const answer: RecordMetadata[] = [];
    for (const [partition, n] of counts) {
      const base = next.get(partition) ?? 0;
      next.set(partition, base + n);
      answer.push({ topicName: "t", partition, errorCode: 0, baseOffset: String(base) });
    }
    return answer;
  };
  return {
    requests,
    chosen,
    produce,
    hold: () => {
      held = true;
    },
    open: () => {
      held = false;
      release?.();
    },
  };
}

const record = (key: string, value: string): Message => ({ key, value });
const tooLarge = (e: unknown) => (e as Error).message === "too large";

describe("KafkaBatcher", () => {
  it("sends a lone record in a request of its own, without waiting for another", async () => {
    const b = broker();
    const batcher = new KafkaBatcher(b.produce, b.chosen, tooLarge);
    await expect(batcher.add(record("a", "one"), 3)).resolves.toEqual({ partition: 1, offset: "0" });
    expect(b.requests).toEqual([["one"]]);
  });

  it("sends what arrives while a request is in flight together next, each with its own partition and offset", async () => {
    const b = broker();
    const batcher = new KafkaBatcher(b.produce, b.chosen, tooLarge);
    b.hold();
    const first = batcher.add(record("a", "r0"), 2);
    await nextTurn();
    expect(b.requests).toEqual([["r0"]]);
    const rest = ["a", "b", "a", "b", "a"].map((k, i) => batcher.add(record(k, `r${i + 1}`), 2));
    b.open();
    expect(await first).toEqual({ partition: 1, offset: "0" });
    expect(await Promise.all(rest)).toEqual([
      { partition: 1, offset: "1" },
      { partition: 0, offset: "0" },
      { partition: 1, offset: "2" },
      { partition: 0, offset: "1" },
      { partition: 1, offset: "3" },
    ]);
    expect(b.requests).toEqual([["r0"], ["r1", "r2", "r3", "r4", "r5"]]);
  });

  it("sends the records queued in one turn together in the first request, not the first alone", async () => {
    const b = broker();
    const batcher = new KafkaBatcher(b.produce, b.chosen, tooLarge);
    const all = ["a", "b", "a"].map((k, i) => batcher.add(record(k, `s${i}`), 2));
    // A record queued by a later step of the same turn (as a delivery whose signing awaited) joins too.
    const late = Promise.resolve().then(() => batcher.add(record("b", "s3"), 2));
    expect(await Promise.all([...all, await late])).toEqual([
      { partition: 1, offset: "0" },
      { partition: 0, offset: "0" },
      { partition: 1, offset: "1" },
      { partition: 0, offset: "1" },
    ]);
    expect(b.requests).toEqual([["s0", "s1", "s2", "s3"]]);
  });

  it("fails every record of a failed request with its error", async () => {
    const b = broker({ fail: new Error("broker gone") });
    const batcher = new KafkaBatcher(b.produce, b.chosen, tooLarge);
    b.hold();
    const all = ["x", "y", "z"].map((v) => batcher.add(record("a", v), 1).catch((e: Error) => e.message));
    b.open();
    expect(await Promise.all(all)).toEqual(["broker gone", "broker gone", "broker gone"]);
  });

  it("sends the records of a request refused over size again one by one: only the one too large fails", async () => {
    const b = broker({ tooLargeAbove: 10 });
    const batcher = new KafkaBatcher(b.produce, b.chosen, tooLarge);
    b.hold();
    const first = batcher.add(record("a", "small"), 5);
    await nextTurn();
    const small = batcher.add(record("a", "tiny"), 4);
    const big = batcher.add(record("a", "x".repeat(11)), 11).catch((e: Error) => e.message);
    const other = batcher.add(record("b", "wee"), 3);
    b.open();
    await first;
    expect(await small).toEqual({ partition: 1, offset: "1" });
    expect(await big).toBe("too large");
    expect(await other).toEqual({ partition: 0, offset: "0" });
    expect(b.requests.map((r) => r.length)).toEqual([1, 3, 1, 1, 1]);
  });

  it("keeps a request within its record count", async () => {
    const b = broker();
    const batcher = new KafkaBatcher(b.produce, b.chosen, tooLarge);
    b.hold();
    const all = Array.from({ length: BATCH_RECORDS + 2 }, (_, i) => batcher.add(record("a", `v${i}`), 1));
    b.open();
    const receipts = await Promise.all(all);
    expect(receipts.map((r) => r.offset)).toEqual(receipts.map((_, i) => String(i)));
    expect(b.requests.map((r) => r.length)).toEqual([BATCH_RECORDS, 2]);
  });
});
