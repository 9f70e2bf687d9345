import type { BrokerDeliveryRequest, BrokerSender } from "../../app/ports/sending.ts";
import type { SendError, SendOutcome } from "../../domain/delivery.ts";
import type { SqsDestination } from "../../domain/destination.ts";
import type { HmacSha256 } from "../../domain/hmac.ts";
import type { Ed25519Sign } from "../../domain/standard-webhooks-ed25519.ts";
import { isBlockedAddress } from "../delivery/address-policy.ts";
import { classifyFailure } from "../delivery/classify.ts";
import { DeadlineQueue } from "../delivery/deadlines.ts";
import { type Resolve, systemResolve } from "../delivery/guarded-lookup.ts";
import { elapsed, failureOutcome } from "../delivery/outcome.ts";
import type { ProxyRoute } from "../delivery/proxy-tunnel.ts";
import { brokerMessageHeaders, stored, withoutSecrets } from "./message-headers.ts";
import { signV4 } from "./sigv4.ts";
import { type FailedEntry, SqsBatcher, type SqsEntry } from "./sqs-batch.ts";
import { type HttpPost, runtimePost } from "./sqs-http.ts";
import {
  isFifoQueue,
  md5OfAttributes,
  md5OfBody,
  messageSize,
  sqsErrorType,
  sqsFailure,
  stringAttributes,
} from "./sqs-message.ts";

export interface SqsSenderOptions {
  /** Every send's limit: reading the queue's size limit when first needed, and SendMessage. */
  timeoutMs: number;
  /** true lets destinations reach loopback, private, link-local and other non-public addresses. */
  allowPrivateNetworks: boolean;
  lookup?: Resolve;
  isBlocked?: (ip: string) => boolean;
  /** PEM CA certificate(s) to trust instead of the runtime's store (Node's path). */
  ca?: string;
  /** HERALD_DELIVERY_PROXY / _NO_PROXY: SQS calls tunnel through this proxy, null: direct. */
  proxy?: ProxyRoute | null;
  /** How to POST: undici on Node, fetch on Bun and Deno (sqs-http.ts) unless given. */
  post?: HttpPost & { close?(): Promise<void> };
  hmac?: HmacSha256;
  ed25519?: Ed25519Sign;
}

/** An SQS call that did not answer 200, or answered something unusable. */
class SqsRefusal extends Error {
  readonly error: SendError;
  constructor(error: SendError, text: string) {
    super(text);
    this.error = error;
  }
}

/** The queue's MaximumMessageSize, read once per endpoint and version. */
interface QueueLimit {
  version: number;
  maxSize: Promise<number>;
}

const DEFAULT_MAX_SIZE = 262_144;

/**
 * Batch requests in flight at once per standard queue (ADR 27, "SQS: SendMessageBatch"). A FIFO queue has
 * one, so its messages are stored in the order they were sent.
 */
const STANDARD_IN_FLIGHT = 2;

/**
 * Sends deliveries to Amazon SQS queues over SQS's JSON protocol, signed with SigV4 (ADR 27): the body
 * as MessageBody, the signed headers as String attributes, a FIFO queue's group and deduplication ids
 * from the request. An endpoint version's deliveries that meet in a turn, or while its requests are in
 * flight, go in one SendMessageBatch (sqs-batch.ts); a lone one as SendMessage. Stored means SQS's answer
 * for that message carries MD5s of the body and the attributes that are Herald's own. A message over the
 * queue's MaximumMessageSize (read with GetQueueAttributes once per endpoint and version) is refused
 * before sending. Never throws.
 */
export function createSqsSender(options: SqsSenderOptions): BrokerSender {
  const isBlocked = options.allowPrivateNetworks ? () => false : (options.isBlocked ?? isBlockedAddress);
  const post =
    options.post ??
    runtimePost({
      timeoutMs: options.timeoutMs,
      resolve: options.lookup ?? systemResolve,
      isBlocked,
      ca: options.ca,
      proxy: options.proxy ?? null,
    });
  const deadlines = new DeadlineQueue(options.timeoutMs);
  const limits = new Map<string, QueueLimit>();
  /** One batcher per endpoint and version with messages queued or in flight; gone when idle. */
  const batchers = new Map<string, SqsBatcher>();
  let closed = false;

  async function call(d: SqsDestination, action: string, input: object, signal: AbortSignal) {
    const url = new URL(d.endpointUrl ?? `https://sqs.${d.region}.amazonaws.com/`);
    const body = JSON.stringify(input);
    const headers = signV4({
      method: "POST",
      url: url.href,
      headers: {
        "content-type": "application/x-amz-json-1.0",
        "x-amz-target": `AmazonSQS.${action}`,
        ...(d.sessionToken ? { "x-amz-security-token": d.sessionToken } : {}),
      },
      body,
      region: d.region,
      service: "sqs",
      accessKeyId: d.accessKeyId,
      secretAccessKey: d.secretAccessKey,
    });
    const answer = await post(url, headers, body, signal);
    let parsed: Record<string, unknown> = {};
    try {
      parsed = answer.body ? (JSON.parse(answer.body) as Record<string, unknown>) : {};
    } catch {
      // Not JSON (a proxy's page, a 5xx from a load balancer): the status decides.
    }
    if (answer.status !== 200) {
      const type = sqsErrorType(parsed);
      const message = String(parsed.message ?? parsed.Message ?? answer.body.slice(0, 300));
      const text = withoutSecrets(`${action}: ${answer.status} ${type}: ${message}`, [
        d.secretAccessKey,
        d.sessionToken,
      ]);
      throw new SqsRefusal(sqsFailure(answer.status, type), text);
    }
    return parsed;
  }

  function maxSize(req: BrokerDeliveryRequest, d: SqsDestination, signal: AbortSignal): Promise<number> {
    const known = limits.get(req.endpointId);
    if (known && known.version >= req.version) return known.maxSize;
    const limit: QueueLimit = {
      version: req.version,
      maxSize: call(
        d,
        "GetQueueAttributes",
        { QueueUrl: d.queueUrl, AttributeNames: ["MaximumMessageSize"] },
        signal,
      ).then((answer) => {
        const size = Number((answer.Attributes as Record<string, string> | undefined)?.MaximumMessageSize);
        return Number.isInteger(size) && size > 0 ? size : DEFAULT_MAX_SIZE;
      }),
    };
    limits.set(req.endpointId, limit);
    // A failed read is asked again by the next send.
    limit.maxSize.catch(() => {
      if (limits.get(req.endpointId) === limit) limits.delete(req.endpointId);
    });
    return limit.maxSize;
  }

  function batcherFor(req: BrokerDeliveryRequest, d: SqsDestination): SqsBatcher {
    const key = `${req.endpointId} ${req.version}`;
    const known = batchers.get(key);
    if (known) return known;
    const entryOf = (e: SqsEntry, id?: string) => ({
      ...(id === undefined ? { QueueUrl: d.queueUrl } : { Id: id }),
      MessageBody: e.body,
      MessageAttributes: e.attributes,
      ...(e.fifo ? { MessageGroupId: e.fifo.groupId, MessageDeduplicationId: e.fifo.deduplicationId } : {}),
    });
    const batcher = new SqsBatcher(
      {
        sendMessage: (e, signal) => call(d, "SendMessage", entryOf(e), signal),
        sendMessageBatch: (es, signal) =>
          call(
            d,
            "SendMessageBatch",
            { QueueUrl: d.queueUrl, Entries: es.map((e, i) => entryOf(e, String(i))) },
            signal,
          ),
        failed: (f: FailedEntry) => {
          // As SendMessage refused with this code would be: the sender's fault a 400, SQS's a 500.
          const type = String(f.Code ?? "");
          const text = `SendMessageBatch: ${type}: ${String(f.Message ?? "")}`;
          return new SqsRefusal(
            sqsFailure(f.SenderFault === false ? 500 : 400, type),
            withoutSecrets(text, [d.secretAccessKey, d.sessionToken]),
          );
        },
        tooLarge: (err) => err instanceof SqsRefusal && err.error === "message_too_large",
      },
      isFifoQueue(d.queueUrl) ? 1 : STANDARD_IN_FLIGHT,
      () => {
        if (batchers.get(key) === batcher) batchers.delete(key);
      },
    );
    batchers.set(key, batcher);
    return batcher;
  }

  async function attempt(
    req: BrokerDeliveryRequest,
    signal: AbortSignal,
    start: number,
  ): Promise<SendOutcome> {
    const d = req.destination;
    if (d.kind !== "sqs") return failureOutcome("connection_error", 0, { body: "not an SQS destination" });
    const attributes = stringAttributes(await brokerMessageHeaders(req, options.hmac, options.ed25519));
    const limit = await maxSize(req, d, signal);
    const size = messageSize(req.body, attributes);
    if (size > limit) {
      return failureOutcome("message_too_large", elapsed(start), {
        body: `${size} bytes (body and attributes) is over the queue's MaximumMessageSize of ${limit}`,
      });
    }
    const answer = await batcherFor(req, d).add({
      body: req.body,
      attributes,
      size,
      signal,
      ...(isFifoQueue(d.queueUrl)
        ? { fifo: { groupId: req.messageKey, deduplicationId: req.deduplicationId } }
        : {}),
    });
    // What was stored must be what was sent.
    if (
      answer.MD5OfMessageBody !== md5OfBody(req.body) ||
      answer.MD5OfMessageAttributes !== md5OfAttributes(attributes)
    ) {
      return failureOutcome("broker_rejected", elapsed(start), {
        body: `SQS answered MD5s that are not the message's (body ${String(answer.MD5OfMessageBody)}, attributes ${String(answer.MD5OfMessageAttributes)})`,
      });
    }
    const receipt: Record<string, string> = { message_id: String(answer.MessageId ?? "") };
    if (typeof answer.SequenceNumber === "string") receipt.sequence_number = answer.SequenceNumber;
    return stored(elapsed(start), receipt);
  }

  async function send(req: BrokerDeliveryRequest): Promise<SendOutcome> {
    const start = performance.now();
    if (closed) return failureOutcome("connection_error", 0);
    const controller = new AbortController();
    let timedOut = false;
    const deadline = deadlines.watch(() => {
      timedOut = true;
      controller.abort(new DOMException("delivery timed out", "TimeoutError"));
    });
    try {
      return await attempt(req, controller.signal, start);
    } catch (err) {
      if (timedOut) return failureOutcome("timeout", elapsed(start));
      if (err instanceof SqsRefusal) return failureOutcome(err.error, elapsed(start), { body: err.message });
      const secrets =
        req.destination.kind === "sqs" ? [req.destination.secretAccessKey, req.destination.sessionToken] : [];
      const text = withoutSecrets(err instanceof Error ? err.message : String(err), secrets);
      return failureOutcome(classifyFailure(err), elapsed(start), { body: text });
    } finally {
      deadline.settle();
    }
  }

  return {
    send,
    async release(endpointId) {
      limits.delete(endpointId);
    },
    async close() {
      closed = true;
      limits.clear();
      for (const b of batchers.values()) b.close(() => new Error("the SQS sender is closed"));
      await post.close?.();
    },
  };
}
