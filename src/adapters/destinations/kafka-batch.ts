// Many deliveries to one Kafka cluster, one produce request (ADR 27, "Connections"): an idempotent
// kafkajs producer keeps one request in flight per broker, so sending each delivery as its own request
// caps a cluster at one round trip per delivery. Deliveries that arrive while a request is in flight
// wait for it and go together in the next one, whichever of the cluster's endpoints (topics) they are
// for, each still settled by the broker's answer for its own record. When nothing is in flight a request
// starts at the end of the event loop's current turn, not at the first record: the engine starts the
// deliveries its freed slots allow in one turn, and sending the first alone made the rest wait a round
// trip for it (2.1 to 3.8 records a request where 10 could meet).
import { setImmediate } from "node:timers";
import type { Message, Partitioners, RecordMetadata, TopicMessages } from "kafkajs";
import { takeBatch } from "./take-batch.ts";

/** What a stored record's place is: its partition and offset (the offset as text: it is an int64). */
export type KafkaReceipt = { partition: number; offset: string };

/** One produce request with its records by topic, as kafkajs's `producer.sendBatch` takes them (acks set by the caller). */
export type Produce = (topicMessages: TopicMessages[]) => Promise<RecordMetadata[]>;

interface Waiting {
  topic: string;
  message: Message;
  bytes: number;
  resolve: (receipt: KafkaReceipt) => void;
  reject: (err: unknown) => void;
}

/** A request holds at most this many records and bytes, well under Kafka's default 1 MiB batch limit. */
export const BATCH_RECORDS = 200;
export const BATCH_BYTES = 256 * 1024;

/**
 * Which partition the partitioner chose for each record object, the last time it was asked: kafkajs
 * groups a request's records by topic and partition in order, so a record's offset is its partition's
 * base offset plus the records of that topic and partition before it in the request.
 */
export function recordingPartitioner(
  inner: ReturnType<typeof Partitioners.DefaultPartitioner>,
  chosen: WeakMap<Message, number>,
): ReturnType<typeof Partitioners.DefaultPartitioner> {
  return (args) => {
    const partition = inner(args);
    chosen.set(args.message, partition);
    return partition;
  };
}

/** How a failed request is sent again, so that one record's or one topic's failure never fails another's. */
export interface Splits {
  /** Is this failure one about size, which a request of fewer records may not meet? */
  tooLarge(err: unknown): boolean;
  /** Is this failure the cluster's (unreachable, timed out) rather than one topic's (unknown, refused)? */
  whole(err: unknown): boolean;
}

/**
 * Queues records for one producer and sends them in requests of up to BATCH_RECORDS / BATCH_BYTES, one
 * request at a time, the first of a run once the turn that queued its first record is over. A request
 * that fails fails each of its records with the same error, except:
 * - a failure of a request with records for several topics that is not the whole cluster's (an unknown
 *   or forbidden topic fails kafkajs's whole request): each topic's records are sent again on their own;
 * - a failure over size with more than one record: each is sent again alone.
 */
export class KafkaBatcher {
  readonly #produce: Produce;
  readonly #chosen: WeakMap<Message, number>;
  readonly #splits: Splits;
  #queue: Waiting[] = [];
  #running = false;

  constructor(produce: Produce, chosen: WeakMap<Message, number>, splits: Splits) {
    this.#produce = produce;
    this.#chosen = chosen;
    this.#splits = splits;
  }

  /** Resolves with the record's place once the broker stored it; rejects with the request's failure. */
  add(topic: string, message: Message, bytes: number): Promise<KafkaReceipt> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ topic, message, bytes, resolve, reject });
      if (!this.#running) {
        // Running from now: what else arrives before the turn ends joins this first request.
        this.#running = true;
        setImmediate(() => void this.#run());
      }
    });
  }

  async #run(): Promise<void> {
    try {
      while (this.#queue.length > 0) await this.#send(this.#take());
    } finally {
      this.#running = false;
    }
  }

  /** The next request's records: the queue's head, at least one, within the limits. */
  #take(): Waiting[] {
    return takeBatch(this.#queue, BATCH_RECORDS, BATCH_BYTES, (w) => w.bytes);
  }

  async #send(batch: Waiting[]): Promise<void> {
    const byTopic = new Map<string, Waiting[]>();
    for (const w of batch) {
      const same = byTopic.get(w.topic);
      if (same) same.push(w);
      else byTopic.set(w.topic, [w]);
    }
    let stored: RecordMetadata[];
    try {
      stored = await this.#produce(
        [...byTopic].map(([topic, ws]) => ({ topic, messages: ws.map((w) => w.message) })),
      );
    } catch (err) {
      if (byTopic.size > 1 && !this.#splits.whole(err)) {
        for (const ws of byTopic.values()) await this.#send(ws);
      } else if (batch.length > 1 && this.#splits.tooLarge(err)) {
        for (const w of batch) await this.#send([w]);
      } else {
        for (const w of batch) w.reject(err);
      }
      return;
    }
    this.#settle(batch, stored);
  }

  #settle(batch: Waiting[], stored: RecordMetadata[]): void {
    const base = new Map<string, bigint>();
    for (const s of stored) {
      if (s.baseOffset !== undefined) base.set(`${s.partition} ${s.topicName}`, BigInt(s.baseOffset));
    }
    const seen = new Map<string, number>();
    for (const w of batch) {
      const partition =
        this.#chosen.get(w.message) ?? (batch.length === 1 ? stored[0]?.partition : undefined);
      const at = `${partition} ${w.topic}`;
      const first = partition === undefined ? undefined : base.get(at);
      if (partition === undefined || first === undefined) {
        w.reject(new Error("Kafka answered the produce without an offset for this record"));
        continue;
      }
      const index = seen.get(at) ?? 0;
      seen.set(at, index + 1);
      w.resolve({ partition, offset: String(first + BigInt(index)) });
    }
  }
}
