// Many deliveries to one SQS queue, one request (ADR 27, "SQS: SendMessageBatch"): SQS charges per
// request, and ElasticMQ spent 2.66 CPU s per 1,000 single SendMessages in the bench. Deliveries queued
// in the same event-loop turn, or while the queue's requests are in flight, go together in one
// SendMessageBatch of up to 10 entries, each settled by its own entry of the answer. A lone delivery is
// not held for company: it goes when the turn that queued it ends, as its own SendMessage.
import { setImmediate } from "node:timers";
import type { StringAttributes } from "./sqs-message.ts";
import { takeBatch } from "./take-batch.ts";

/** One message as SendMessage would carry it, and its sender's give-up signal. */
export interface SqsEntry {
  body: string;
  attributes: StringAttributes;
  /** A FIFO queue's MessageGroupId and MessageDeduplicationId; absent for a standard queue. */
  fifo?: { groupId: string; deduplicationId: string };
  /** What SQS counts against its size limits (sqs-message.ts `messageSize`). */
  size: number;
  /** Aborted when the delivery's deadline passes: it stops waiting, and is not sent if not yet sent. */
  signal: AbortSignal;
}

/** A stored message's answer: SendMessage's, or a `Successful` entry of SendMessageBatch's. */
export type SentMessage = Record<string, unknown>;

/** A `Failed` entry of SendMessageBatch's answer. */
export interface FailedEntry {
  Id?: unknown;
  Code?: unknown;
  Message?: unknown;
  SenderFault?: unknown;
}

/** The queue's two requests, and how their failures read; each throws as a refused or broken call does. */
export interface SqsRequests {
  sendMessage(entry: SqsEntry, signal: AbortSignal): Promise<SentMessage>;
  sendMessageBatch(entries: SqsEntry[], signal: AbortSignal): Promise<Record<string, unknown>>;
  /** The error a `Failed` entry fails with: the one a SendMessage refused with that code gets. */
  failed(entry: FailedEntry): Error;
  /** Is this whole-request failure about the batch's size, which its messages alone may meet? */
  tooLarge(err: unknown): boolean;
}

/** SendMessageBatch takes at most 10 entries. */
export const BATCH_ENTRIES = 10;
/**
 * The sum of a batch's message sizes stays within 256 KiB: SQS's batch payload limit as long documented
 * (a message over it goes alone, as SendMessage, which the queue's own MaximumMessageSize bounds).
 */
export const BATCH_BYTES = 262_144;

interface Request {
  controller: AbortController;
  /** Entries still waiting for it: when the last gives up, the request is aborted. */
  waiting: number;
}

interface Waiting {
  entry: SqsEntry;
  resolve: (answer: SentMessage) => void;
  reject: (err: unknown) => void;
  settled: boolean;
  request: Request | null;
  giveUp: () => void;
}

/**
 * Queues one queue's messages and sends them in requests of up to BATCH_ENTRIES / BATCH_BYTES, at most
 * `maxInFlight` at a time; a run starts once the turn that queued its first message is over. A request
 * that fails fails each of its messages with its error, except a failure over size with more than one
 * message: each is sent again alone, in order. `onIdle` runs when nothing is queued or in flight.
 */
export class SqsBatcher {
  readonly #requests: SqsRequests;
  readonly #maxInFlight: number;
  readonly #onIdle: () => void;
  #queue: Waiting[] = [];
  #inFlight = 0;
  #scheduled = false;
  #closed: (() => Error) | null = null;

  constructor(requests: SqsRequests, maxInFlight: number, onIdle: () => void = () => {}) {
    this.#requests = requests;
    this.#maxInFlight = maxInFlight;
    this.#onIdle = onIdle;
  }

  /** Resolves with the message's answer once SQS stored it; rejects with its failure, or when its signal aborts. */
  add(entry: SqsEntry): Promise<SentMessage> {
    return new Promise((resolve, reject) => {
      if (entry.signal.aborted) {
        reject(entry.signal.reason);
        return;
      }
      const w: Waiting = { entry, resolve, reject, settled: false, request: null, giveUp: () => {} };
      w.giveUp = () => this.#giveUp(w);
      entry.signal.addEventListener("abort", w.giveUp, { once: true });
      this.#queue.push(w);
      if (!this.#scheduled) {
        // What else arrives before the turn ends joins this request.
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#pump();
        });
      }
    });
  }

  /** From now on, what is queued and not yet sent fails with this error instead. */
  close(error: () => Error): void {
    this.#closed = error;
  }

  #pump(): void {
    if (this.#closed) for (const w of this.#queue.splice(0)) this.#settle(w, null, this.#closed());
    while (this.#queue.length > 0 && this.#inFlight < this.#maxInFlight) {
      const batch = this.#take();
      this.#inFlight++;
      void this.#send(batch)
        // Only a bug gets here (#send settles every outcome it knows): the messages still fail, not hang.
        .catch((err: unknown) => {
          for (const w of batch) this.#settle(w, null, err);
        })
        .finally(() => {
          this.#inFlight--;
          // What waited for this request has waited long enough: it goes now, not at the turn's end.
          this.#pump();
        });
    }
    if (this.#inFlight === 0 && this.#queue.length === 0 && !this.#scheduled) this.#onIdle();
  }

  /** The next request's messages: the queue's head, at least one, within the limits. */
  #take(): Waiting[] {
    return takeBatch(this.#queue, BATCH_ENTRIES, BATCH_BYTES, (w) => w.entry.size);
  }

  async #send(batch: Waiting[]): Promise<void> {
    const live = batch.filter((w) => !w.settled);
    if (live.length === 0) return;
    const request: Request = { controller: new AbortController(), waiting: live.length };
    for (const w of live) w.request = request;
    const signal = request.controller.signal;
    try {
      if (live.length === 1) {
        const w = live[0] as Waiting;
        this.#settle(w, await this.#requests.sendMessage(w.entry, signal));
        return;
      }
      const answer = await this.#requests.sendMessageBatch(
        live.map((w) => w.entry),
        signal,
      );
      this.#settleEach(live, answer);
    } catch (err) {
      if (live.length > 1 && this.#requests.tooLarge(err)) {
        for (const w of live) await this.#send([w]);
      } else {
        for (const w of live) this.#settle(w, null, err);
      }
    }
  }

  /** Each entry by its own Id (its index in the request): Successful, Failed, or missing from the answer. */
  #settleEach(batch: Waiting[], answer: Record<string, unknown>): void {
    const byId = new Map<string, { ok: SentMessage } | { failed: FailedEntry }>();
    for (const s of asList(answer.Successful)) byId.set(String(s.Id), { ok: s });
    for (const f of asList(answer.Failed)) byId.set(String(f.Id), { failed: f });
    for (const [i, w] of batch.entries()) {
      const result = byId.get(String(i));
      if (!result) {
        const missing = { Id: String(i), Message: "the answer names neither success nor failure for it" };
        this.#settle(w, null, this.#requests.failed(missing));
      } else if ("ok" in result) this.#settle(w, result.ok);
      else this.#settle(w, null, this.#requests.failed(result.failed));
    }
  }

  #settle(w: Waiting, answer: SentMessage | null, err?: unknown): void {
    if (w.settled) return;
    w.settled = true;
    w.entry.signal.removeEventListener("abort", w.giveUp);
    if (answer !== null) w.resolve(answer);
    else w.reject(err);
  }

  /** A message whose deadline passed: out of the queue if still there, and its request aborted if no one else waits. */
  #giveUp(w: Waiting): void {
    if (w.settled) return;
    const at = this.#queue.indexOf(w);
    if (at >= 0) this.#queue.splice(at, 1);
    this.#settle(w, null, w.entry.signal.reason);
    const request = w.request;
    if (request && --request.waiting === 0) request.controller.abort(w.entry.signal.reason);
  }
}

const asList = (v: unknown): Record<string, unknown>[] =>
  Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => typeof x === "object" && x !== null) : [];
