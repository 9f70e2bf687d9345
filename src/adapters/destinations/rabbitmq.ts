import type { BrokerDeliveryRequest, BrokerSender } from "../../app/ports/sending.ts";
import type { SendOutcome } from "../../domain/delivery.ts";
import type { HmacSha256 } from "../../domain/hmac.ts";
import type { Ed25519Sign } from "../../domain/standard-webhooks-ed25519.ts";
import { isBlockedAddress } from "../delivery/address-policy.ts";
import { DeadlineQueue } from "../delivery/deadlines.ts";
import { type Resolve, systemResolve } from "../delivery/guarded-lookup.ts";
import { elapsed, failureOutcome } from "../delivery/outcome.ts";
import { brokerMessageHeaders, stored } from "./message-headers.ts";
import { amqpTarget, RabbitProducer } from "./rabbitmq-producer.ts";

export interface RabbitmqSenderOptions {
  /** Every send's limit: connecting, the channel, the publish and its confirm. */
  timeoutMs: number;
  /** true lets destinations reach loopback, private, link-local and other non-public addresses. */
  allowPrivateNetworks: boolean;
  /** Host name resolution; defaults to the system resolver. */
  lookup?: Resolve;
  /** Which addresses are refused; defaults to isBlockedAddress. */
  isBlocked?: (ip: string) => boolean;
  /** PEM CA certificate(s) to trust instead of the runtime's store (amqps). */
  ca?: string;
  /** A connection unused this long is closed; 5 minutes unless given. */
  idleMs?: number;
  /** Signers; the domain's Web Crypto ones (every runtime) unless given (Node's node:crypto ones are faster). */
  hmac?: HmacSha256;
  ed25519?: Ed25519Sign;
}

const IDLE_MS = 5 * 60_000;

/** The producers of one endpoint, by version (the endpoint's `updatedAt`). */
type Versions = Map<number, RabbitProducer>;

/**
 * Publishes deliveries to RabbitMQ destinations (ADR 27): one connection with one confirm channel per
 * endpoint and version, opened by the first send. A message is stored when the broker acks it and did
 * not return it first (`mandatory`): a return is `unroutable`, a nack `broker_rejected`, a channel the
 * broker closes `destination_not_found` (404) and so on (rabbitmq-errors.ts `amqpFailure`). Every send
 * races `timeoutMs`; a producer whose send timed out is retired (closed once its other sends settle) and
 * the next send opens a new one. Never throws.
 */
export function createRabbitmqSender(options: RabbitmqSenderOptions): BrokerSender {
  const isBlocked = options.allowPrivateNetworks ? () => false : (options.isBlocked ?? isBlockedAddress);
  const resolve = options.lookup ?? systemResolve;
  const idleMs = options.idleMs ?? IDLE_MS;
  const deadlines = new DeadlineQueue(options.timeoutMs);
  const pool = new Map<string, Versions>();
  const retiring = new Set<RabbitProducer>();
  let closed = false;

  function remove(endpointId: string, version: number, producer: RabbitProducer) {
    const versions = pool.get(endpointId);
    if (versions?.get(version) !== producer) return;
    versions.delete(version);
    if (versions.size === 0) pool.delete(endpointId);
  }

  /** Takes a producer out of the pool; it is closed as soon as nothing is in flight on it. */
  function retire(producer: RabbitProducer) {
    if (producer.inFlight === 0) {
      void producer.close();
      return;
    }
    retiring.add(producer);
    // Its sends in flight have all timed out by then, whether or not the broker ever answers them.
    const late = setTimeout(() => {
      if (retiring.delete(producer)) void producer.close();
    }, options.timeoutMs);
    (late as { unref?: () => void }).unref?.();
  }

  function producerFor(req: BrokerDeliveryRequest): RabbitProducer | null {
    const { endpointId, version, destination } = req;
    if (destination.kind !== "rabbitmq") return null;
    let versions = pool.get(endpointId);
    const existing = versions?.get(version);
    if (existing && !existing.gone) return existing;
    const target = amqpTarget(destination.url, destination.password);
    if (!target) return null;
    if (!versions) {
      versions = new Map();
      pool.set(endpointId, versions);
    }
    // A newer configuration: what older versions hold is closed once their sends settle.
    for (const [v, older] of versions) {
      if (v < version) {
        versions.delete(v);
        retire(older);
      }
    }
    const producer: RabbitProducer = new RabbitProducer(target, {
      timeoutMs: options.timeoutMs,
      resolve,
      isBlocked,
      ca: options.ca,
      connectionName: `herald ${endpointId}`,
      onGone: () => remove(endpointId, version, producer),
    });
    versions.set(version, producer);
    return producer;
  }

  async function publish(req: BrokerDeliveryRequest, producer: RabbitProducer): Promise<SendOutcome> {
    const start = performance.now();
    const destination = req.destination as Extract<
      BrokerDeliveryRequest["destination"],
      { kind: "rabbitmq" }
    >;
    const headers = Object.fromEntries(await brokerMessageHeaders(req, options.hmac, options.ed25519));
    const result = await producer.publish(
      destination.exchange,
      destination.routingKey,
      Buffer.from(req.body),
      {
        contentType: "application/json",
        deliveryMode: 2,
        messageId: req.eventId,
        headers,
      },
    );
    if (result.ok) {
      return stored(elapsed(start), { delivery_tag: result.deliveryTag });
    }
    return failureOutcome(result.error, elapsed(start), { body: result.text });
  }

  function send(req: BrokerDeliveryRequest): Promise<SendOutcome> {
    const start = performance.now();
    if (closed) return Promise.resolve(failureOutcome("connection_error", 0));
    const producer = producerFor(req);
    if (!producer)
      return Promise.resolve(
        failureOutcome("connection_error", 0, { body: "not a RabbitMQ destination URL" }),
      );
    producer.inFlight++;
    return new Promise<SendOutcome>((done) => {
      let settled = false;
      const finish = (outcome: SendOutcome) => {
        if (settled) return;
        settled = true;
        deadline.settle();
        done(outcome);
      };
      const deadline = deadlines.watch(() => {
        // Not confirmed in time: this connection is not to be trusted with the next send.
        remove(req.endpointId, req.version, producer);
        retire(producer);
        finish(failureOutcome("timeout", elapsed(start)));
      });
      publish(req, producer)
        .catch((err: unknown) => failureOutcome("connection_error", elapsed(start), { body: String(err) }))
        .then(finish)
        .finally(() => {
          producer.inFlight--;
          if (producer.inFlight === 0 && retiring.delete(producer)) void producer.close();
        });
    });
  }

  // Connections unused for idleMs are closed; one timer for all, which never keeps the process alive.
  const sweeper = setInterval(
    () => {
      const now = performance.now();
      for (const versions of pool.values()) {
        for (const producer of versions.values()) {
          if (producer.inFlight === 0 && now - producer.lastUsed >= idleMs) void producer.close();
        }
      }
    },
    Math.max(1_000, Math.min(idleMs / 4, 60_000)),
  );
  (sweeper as { unref?: () => void }).unref?.();

  async function closeAll(producers: RabbitProducer[]) {
    // Sends in flight settle first (each bounded by timeoutMs), then their connections close.
    await Promise.all(
      producers.map(async (p) => {
        for (let waited = 0; p.inFlight > 0 && waited < options.timeoutMs + 1_000; waited += 20) {
          await new Promise((r) => setTimeout(r, 20));
        }
        await p.close();
      }),
    );
  }

  return {
    send,
    async release(endpointId) {
      const producers = [...(pool.get(endpointId)?.values() ?? [])];
      pool.delete(endpointId);
      await closeAll(producers);
    },
    async close() {
      closed = true;
      clearInterval(sweeper);
      const producers = [...pool.values()].flatMap((v) => [...v.values()]);
      pool.clear();
      await closeAll([...producers, ...retiring]);
      retiring.clear();
    },
  };
}
