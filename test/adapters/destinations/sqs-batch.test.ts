import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import {
  BATCH_BYTES,
  BATCH_ENTRIES,
  SqsBatcher,
  type SqsEntry,
  type SqsRequests,
} from "../../../src/adapters/destinations/sqs-batch.ts";

// The SQS sender's batching (ADR 27, "SQS: SendMessageBatch"): a lone message goes as SendMessage once
// the turn that queued it ends; messages queued in the same turn, or while the queue's requests are in
// flight, go in one SendMessageBatch within 10 entries and 256 KiB; each is settled by its own entry of
// the answer; a FIFO queue (one request in flight) stores them in the order they were queued.

class Refused extends Error {
  readonly code: string;
  constructor(code: string, text: string) {
    super(text);
    this.code = code;
  }
}

/**
 * An SQS double: each request is recorded as its action and bodies; `refuse` names bodies SQS fails as
 * entries; `fail` fails whole requests; `tooLargeAbove` refuses a batch whose sizes add up to more;
 * `hold()` keeps requests unanswered until `open()`.
 */
function sqs(opts: { refuse?: Set<string>; fail?: Error; tooLargeAbove?: number; omit?: string } = {}) {
  const requests: string[] = [];
  const signals: AbortSignal[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let held = false;
  const waiting: (() => void)[] = [];
  const gate = async (signal: AbortSignal) => {
    signals.push(signal);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      if (held) await new Promise<void>((r) => waiting.push(r));
      if (opts.fail) throw opts.fail;
    } finally {
      inFlight--;
    }
  };
  const stored = (e: SqsEntry) => ({ MessageId: `id-${e.body}`, MD5OfMessageBody: `md5-${e.body}` });
  const requestsDouble: SqsRequests = {
    async sendMessage(e, signal) {
      requests.push(`one ${e.body}`);
      await gate(signal);
      if (opts.refuse?.has(e.body)) throw new Refused("InvalidAttributeValue", `refused ${e.body}`);
      return stored(e);
    },
    async sendMessageBatch(es, signal) {
      requests.push(`batch ${es.map((e) => e.body).join(",")}`);
      await gate(signal);
      const total = es.reduce((n, e) => n + e.size, 0);
      if (opts.tooLargeAbove !== undefined && total > opts.tooLargeAbove) {
        throw new Refused("BatchRequestTooLong", "too long");
      }
      const ok = es.flatMap((e, i) =>
        opts.refuse?.has(e.body) || e.body === opts.omit ? [] : [{ Id: String(i), ...stored(e) }],
      );
      const failed = es.flatMap((e, i) =>
        opts.refuse?.has(e.body)
          ? [
              {
                Id: String(i),
                Code: "InvalidAttributeValue",
                Message: "InvalidMessageContents",
                SenderFault: true,
              },
            ]
          : [],
      );
      // As SQS does, Failed before Successful, neither in the request's order.
      return { Failed: failed.reverse(), Successful: ok.reverse() };
    },
    failed: (f) => new Refused(String(f.Code ?? ""), `entry ${String(f.Id)}: ${String(f.Message)}`),
    tooLarge: (err) => err instanceof Refused && err.code === "BatchRequestTooLong",
  };
  return {
    requests,
    signals,
    requestsDouble,
    maxInFlight: () => maxInFlight,
    hold: () => {
      held = true;
    },
    open: () => {
      held = false;
      for (const r of waiting.splice(0)) r();
    },
  };
}

const entry = (body: string, size = body.length, signal = new AbortController().signal): SqsEntry => ({
  body,
  attributes: {},
  size,
  signal,
});
const id = (p: Promise<Record<string, unknown>>) =>
  p.then(
    (a) => String(a.MessageId),
    (e: Error) => `failed: ${e.message}`,
  );

describe("SqsBatcher", () => {
  it("sends a lone message as SendMessage at the end of its turn, without waiting for another", async () => {
    const q = sqs();
    let idle = 0;
    const batcher = new SqsBatcher(q.requestsDouble, 2, () => idle++);
    const sent = batcher.add(entry("one"));
    expect(q.requests).toEqual([]);
    await nextTurn();
    expect(q.requests).toEqual(["one one"]);
    expect(await sent).toEqual({ MessageId: "id-one", MD5OfMessageBody: "md5-one" });
    await nextTurn();
    expect(idle).toBe(1);
  });

  it("sends the messages queued in one turn together, each settled with its own answer", async () => {
    const q = sqs();
    const batcher = new SqsBatcher(q.requestsDouble, 2);
    const all = ["a", "b", "c"].map((b) => id(batcher.add(entry(b))));
    // A message queued by a later step of the same turn (a delivery whose signing awaited) joins too.
    const late = Promise.resolve().then(() => id(batcher.add(entry("d"))));
    expect(await Promise.all([...all, await late])).toEqual(["id-a", "id-b", "id-c", "id-d"]);
    expect(q.requests).toEqual(["batch a,b,c,d"]);
  });

  it("keeps a request within 10 entries", async () => {
    const q = sqs();
    const batcher = new SqsBatcher(q.requestsDouble, 1);
    const bodies = Array.from({ length: 23 }, (_, i) => `m${i}`);
    expect(await Promise.all(bodies.map((b) => id(batcher.add(entry(b)))))).toEqual(
      bodies.map((b) => `id-${b}`),
    );
    expect(BATCH_ENTRIES).toBe(10);
    expect(q.requests.map((r) => r.split(",").length)).toEqual([10, 10, 3]);
  });

  it("keeps a request's messages within 256 KiB together, and sends one larger alone as SendMessage", async () => {
    const q = sqs();
    const batcher = new SqsBatcher(q.requestsDouble, 1);
    const third = Math.floor(BATCH_BYTES / 3);
    const sizes: [string, number][] = [
      ["a", third],
      ["b", third],
      ["c", third],
      ["d", third + 1],
      ["huge", BATCH_BYTES + 1],
      ["e", 10],
    ];
    const all = sizes.map(([b, size]) => id(batcher.add(entry(b, size))));
    expect(await Promise.all(all)).toEqual(sizes.map(([b]) => `id-${b}`));
    expect(q.requests).toEqual(["batch a,b,c", "one d", "one huge", "one e"]);
  });

  it("fails only the entries SQS failed, each with its own error, and stores the rest", async () => {
    const q = sqs({ refuse: new Set(["bad"]) });
    const batcher = new SqsBatcher(q.requestsDouble, 2);
    const all = ["a", "bad", "c"].map((b) => id(batcher.add(entry(b))));
    expect(await Promise.all(all)).toEqual(["id-a", "failed: entry 1: InvalidMessageContents", "id-c"]);
    expect(q.requests).toEqual(["batch a,bad,c"]);
  });

  it("fails an entry the answer does not name, and no other", async () => {
    const q = sqs({ omit: "lost" });
    const batcher = new SqsBatcher(q.requestsDouble, 2);
    const all = ["a", "lost"].map((b) => id(batcher.add(entry(b))));
    expect(await Promise.all(all)).toEqual([
      "id-a",
      "failed: entry 1: the answer names neither success nor failure for it",
    ]);
  });

  it("fails every message of a failed request with its error", async () => {
    const q = sqs({ fail: new Error("connection reset") });
    const batcher = new SqsBatcher(q.requestsDouble, 2);
    const all = ["x", "y", "z"].map((b) => id(batcher.add(entry(b))));
    expect(await Promise.all(all)).toEqual(Array(3).fill("failed: connection reset"));
  });

  it("sends the messages of a batch refused over size again one by one, in order", async () => {
    const q = sqs({ tooLargeAbove: 10, refuse: new Set(["bad"]) });
    const batcher = new SqsBatcher(q.requestsDouble, 1);
    const all = ["aaaa", "bad", "cccc", "dddd"].map((b) => id(batcher.add(entry(b))));
    expect(await Promise.all(all)).toEqual(["id-aaaa", "failed: refused bad", "id-cccc", "id-dddd"]);
    expect(q.requests).toEqual(["batch aaaa,bad,cccc,dddd", "one aaaa", "one bad", "one cccc", "one dddd"]);
  });

  it("with one request in flight (a FIFO queue), sends what arrives meanwhile next, in the order it came", async () => {
    const q = sqs();
    const batcher = new SqsBatcher(q.requestsDouble, 1);
    q.hold();
    const first = id(batcher.add(entry("f0")));
    await nextTurn();
    const rest = ["f1", "f2"].map((b) => id(batcher.add(entry(b))));
    await nextTurn();
    const more = ["f3", "f4"].map((b) => id(batcher.add(entry(b))));
    await nextTurn();
    expect(q.requests).toEqual(["one f0"]);
    q.open();
    expect(await Promise.all([first, ...rest, ...more])).toEqual([
      "id-f0",
      "id-f1",
      "id-f2",
      "id-f3",
      "id-f4",
    ]);
    expect(q.requests).toEqual(["one f0", "batch f1,f2,f3,f4"]);
    expect(q.maxInFlight()).toBe(1);
  });

  it("with two in flight (a standard queue), sends what arrives during the first at once, and holds the rest", async () => {
    const q = sqs();
    const batcher = new SqsBatcher(q.requestsDouble, 2);
    q.hold();
    const all = [id(batcher.add(entry("s0")))];
    await nextTurn();
    all.push(id(batcher.add(entry("s1"))));
    await nextTurn();
    all.push(id(batcher.add(entry("s2"))), id(batcher.add(entry("s3"))));
    await nextTurn();
    expect(q.requests).toEqual(["one s0", "one s1"]);
    q.open();
    expect(await Promise.all(all)).toEqual(["id-s0", "id-s1", "id-s2", "id-s3"]);
    expect(q.requests).toEqual(["one s0", "one s1", "batch s2,s3"]);
    expect(q.maxInFlight()).toBe(2);
  });

  it("gives up a message whose signal aborts: unsent if queued, its request aborted only when no one else waits", async () => {
    const q = sqs();
    const batcher = new SqsBatcher(q.requestsDouble, 1);
    q.hold();
    const deadlines = ["a", "b", "c"].map(() => new AbortController());
    const sent = ["a", "b"].map((b, i) => id(batcher.add(entry(b, 1, deadlines[i]?.signal))));
    await nextTurn();
    const queued = id(batcher.add(entry("c", 1, deadlines[2]?.signal)));
    deadlines[2]?.abort(new Error("c timed out"));
    expect(await queued).toBe("failed: c timed out");
    deadlines[0]?.abort(new Error("a timed out"));
    expect(await sent[0]).toBe("failed: a timed out");
    expect(q.signals[0]?.aborted).toBe(false);
    deadlines[1]?.abort(new Error("b timed out"));
    expect(await sent[1]).toBe("failed: b timed out");
    expect(q.signals[0]?.aborted).toBe(true);
    q.open();
    await nextTurn();
    // c never went: its deadline passed while it waited.
    expect(q.requests).toEqual(["batch a,b"]);
  });

  it("fails what is queued once closed, instead of sending it", async () => {
    const q = sqs();
    const batcher = new SqsBatcher(q.requestsDouble, 1);
    const queued = id(batcher.add(entry("late")));
    batcher.close(() => new Error("closed"));
    expect(await queued).toBe("failed: closed");
    expect(q.requests).toEqual([]);
  });
});
