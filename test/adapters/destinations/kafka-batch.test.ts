import { setImmediate as nextTurn } from "node:timers/promises";
import type { Message, RecordMetadata } from "kafkajs";
import { describe, expect, it } from "vitest";
import {
  BATCH_RECORDS,
  KafkaBatcher,
  type Produce,
  type Splits,
} from "../../../src/adapters/destinations/kafka-batch.ts";

// The Kafka sender's batching (ADR 27): a lone record goes once the turn that queued it ends; records
// queued in the same turn go together, whatever their topic; records that arrive while a request is in
// flight go together in the next; each gets its own partition and offset; a failure over size never fails
// another record, and a failure of one topic never fails another topic's records.

/**
 * A broker double: partition by the key's first character, offsets counted per topic and partition;
 * `gate` holds requests. As kafkajs does, a request naming a topic in `missing` fails whole.
 */
function broker(opts: { tooLargeAbove?: number; fail?: Error; missing?: string } = {}) {
  const requests: string[][] = [];
  const next = new Map<string, number>();
  const chosen = new WeakMap<Message, number>();
  let release: (() => void) | null = null;
  let held = false;
  const produce: Produce = async (topicMessages) => {
    requests.push(
      topicMessages.flatMap(({ topic, messages }) =>
        messages.map((m) => (topic === "t" ? String(m.value) : `${topic}:${m.value}`)),
      ),
    );
    if (held) await new Promise<void>((r) => (release = r));
    if (opts.fail) throw opts.fail;
    if (topicMessages.some(({ topic }) => topic === opts.missing)) throw new Error("unknown topic");
    const total = topicMessages.reduce(
      (n, t) => t.messages.reduce((k, m) => k + String(m.value).length, n),
      0,
    );
    if (opts.tooLargeAbove !== undefined && total > opts.tooLargeAbove) throw new Error("too large");
    const answer: RecordMetadata[] = [];
    for (const { topic, messages } of topicMessages) {
      const counts = new Map<number, number>();
      for (const m of messages) {
        const p = String(m.key).charCodeAt(0) % 2;
        chosen.set(m, p);
        counts.set(p, (counts.get(p) ?? 0) + 1);
      }
      for (const [partition, n] of counts) {
        const base = next.get(`${topic} ${partition}`) ?? 0;
        next.set(`${topic} ${partition}`, base + n);
        answer.push({ topicName: topic, partition, errorCode: 0, baseOffset: String(base) });
      }
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
const splits: Splits = {
  tooLarge: (e) => (e as Error).message === "too large",
  whole: (e) => (e as Error).message === "broker gone",
};
const add = (b: KafkaBatcher, key: string, value: string, bytes: number, topic = "t") =>
  b.add(topic, record(key, value), bytes);

describe("KafkaBatcher", () => {
  it("sends a lone record in a request of its own, without waiting for another", async () => {
    const b = broker();
    const batcher = new KafkaBatcher(b.produce, b.chosen, splits);
    await expect(add(batcher, "a", "one", 3)).resolves.toEqual({ partition: 1, offset: "0" });
    expect(b.requests).toEqual([["one"]]);
  });

  it("sends what arrives while a request is in flight together next, each with its own partition and offset", async () => {
    const b = broker();
    const batcher = new KafkaBatcher(b.produce, b.chosen, splits);
    b.hold();
    const first = add(batcher, "a", "r0", 2);
    await nextTurn();
    expect(b.requests).toEqual([["r0"]]);
    const rest = ["a", "b", "a", "b", "a"].map((k, i) => add(batcher, k, `r${i + 1}`, 2));
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
    const batcher = new KafkaBatcher(b.produce, b.chosen, splits);
    const all = ["a", "b", "a"].map((k, i) => add(batcher, k, `s${i}`, 2));
    // A record queued by a later step of the same turn (as a delivery whose signing awaited) joins too.
    const late = Promise.resolve().then(() => add(batcher, "b", "s3", 2));
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
    const batcher = new KafkaBatcher(b.produce, b.chosen, splits);
    b.hold();
    const all = ["x", "y", "z"].map((v) => add(batcher, "a", v, 1).catch((e: Error) => e.message));
    b.open();
    expect(await Promise.all(all)).toEqual(["broker gone", "broker gone", "broker gone"]);
  });

  it("sends the records of a request refused over size again one by one: only the one too large fails", async () => {
    const b = broker({ tooLargeAbove: 10 });
    const batcher = new KafkaBatcher(b.produce, b.chosen, splits);
    b.hold();
    const first = add(batcher, "a", "small", 5);
    await nextTurn();
    const small = add(batcher, "a", "tiny", 4);
    const big = add(batcher, "a", "x".repeat(11), 11).catch((e: Error) => e.message);
    const other = add(batcher, "b", "wee", 3);
    b.open();
    await first;
    expect(await small).toEqual({ partition: 1, offset: "1" });
    expect(await big).toBe("too large");
    expect(await other).toEqual({ partition: 0, offset: "0" });
    expect(b.requests.map((r) => r.length)).toEqual([1, 3, 1, 1, 1]);
  });

  it("keeps a request within its record count", async () => {
    const b = broker();
    const batcher = new KafkaBatcher(b.produce, b.chosen, splits);
    b.hold();
    const all = Array.from({ length: BATCH_RECORDS + 2 }, (_, i) => add(batcher, "a", `v${i}`, 1));
    b.open();
    const receipts = await Promise.all(all);
    expect(receipts.map((r) => r.offset)).toEqual(receipts.map((_, i) => String(i)));
    expect(b.requests.map((r) => r.length)).toEqual([BATCH_RECORDS, 2]);
  });

  it("sends the records of several topics together, each with its own topic's partition and offset", async () => {
    const b = broker();
    const batcher = new KafkaBatcher(b.produce, b.chosen, splits);
    const all = [
      add(batcher, "a", "x0", 2, "x"),
      add(batcher, "a", "y0", 2, "y"),
      add(batcher, "a", "x1", 2, "x"),
      add(batcher, "b", "y1", 2, "y"),
    ];
    expect(await Promise.all(all)).toEqual([
      { partition: 1, offset: "0" },
      { partition: 1, offset: "0" },
      { partition: 1, offset: "1" },
      { partition: 0, offset: "0" },
    ]);
    expect(b.requests).toEqual([["x:x0", "x:x1", "y:y0", "y:y1"]]);
  });

  it("sends a request that failed for one topic again topic by topic: only that topic's records fail", async () => {
    const b = broker({ missing: "gone" });
    const batcher = new KafkaBatcher(b.produce, b.chosen, splits);
    const kept = add(batcher, "a", "k0", 2, "kept");
    const lost = add(batcher, "a", "g0", 2, "gone").catch((e: Error) => e.message);
    const also = add(batcher, "b", "k1", 2, "kept");
    expect([await kept, await lost, await also]).toEqual([
      { partition: 1, offset: "0" },
      "unknown topic",
      { partition: 0, offset: "0" },
    ]);
    expect(b.requests).toEqual([["kept:k0", "kept:k1", "gone:g0"], ["kept:k0", "kept:k1"], ["gone:g0"]]);
  });

  it("fails every topic's records at once when the cluster failed, without sending each topic again", async () => {
    const b = broker({ fail: new Error("broker gone") });
    const batcher = new KafkaBatcher(b.produce, b.chosen, splits);
    const all = ["x", "y"].map((topic) => add(batcher, "a", "v", 1, topic).catch((e: Error) => e.message));
    expect(await Promise.all(all)).toEqual(["broker gone", "broker gone"]);
    expect(b.requests).toHaveLength(1);
  });
});
