import type { Producer } from "kafkajs";
import type { Logger } from "../../app/logger.ts";
import type { BrokerDeliveryRequest, BrokerSender } from "../../app/ports/sending.ts";
import type { Clock } from "../../app/ports/system.ts";
import type { SendOutcome } from "../../domain/delivery.ts";
import type { KafkaDestination } from "../../domain/destination.ts";
import type { HmacSha256 } from "../../domain/hmac.ts";
import type { Ed25519Sign } from "../../domain/standard-webhooks-ed25519.ts";
import { isBlockedAddress } from "../delivery/address-policy.ts";
import { DeadlineQueue } from "../delivery/deadlines.ts";
import { type Resolve, systemResolve } from "../delivery/guarded-lookup.ts";
import { elapsed, failureOutcome } from "../delivery/outcome.ts";
import type { KafkaBatcher } from "./kafka-batch.ts";
import { classifyKafkaFailure } from "./kafka-errors.ts";
import { connectionKey, openProducer } from "./kafka-producer.ts";
import { guardedSocketFactory } from "./kafka-socket.ts";
import { brokerMessageHeaders, withoutSecrets } from "./message-headers.ts";

export interface KafkaSenderOptions {
  /** Whole-attempt limit: the address check, connecting (and SASL), metadata, the produce and its acks. */
  timeoutMs: number;
  /** true lets brokers be on loopback, private, link-local and other non-public addresses. */
  allowPrivateNetworks: boolean;
  /** Host name resolution for the address check; defaults to node:dns lookup (Bun and Deno have it). */
  resolve?: Resolve;
  /** Which addresses are refused; defaults to isBlockedAddress. */
  isBlocked?: (ip: string) => boolean;
  /** Where kafkajs's own log lines and failed sends go, at debug level, credentials cut out. */
  logger?: Logger;
  /** What idleness is measured with. */
  clock?: Clock;
  /** A producer unused this long is closed (ADR 27: 5 minutes). */
  idleMs?: number;
  /** Signers; the domain's Web Crypto ones (every runtime) unless given (Node's node:crypto ones are faster). */
  hmac?: HmacSha256;
  ed25519?: Ed25519Sign;
}

/** One pooled producer: a cluster connection's (brokers, TLS, SASL), shared by the endpoints that name it. */
interface Pooled {
  key: string;
  producer: Producer;
  /** Sends the records that wait while a request is in flight together, in the next one, whatever their topic. */
  batcher: KafkaBatcher;
  /** Settles when the producer is connected; a failed connect drops it from the pool. */
  ready: Promise<void>;
  lastUsed: number;
  sending: number;
}

/** Which connection an endpoint's current configuration (its newest version seen) names. */
interface Binding {
  version: number;
  key: string;
}

const IDLE_MS = 5 * 60_000;
const systemClock: Clock = { now: () => new Date() };

/**
 * Sends deliveries to Kafka topics (ADR 27) with kafkajs, on Node, Bun and Deno alike. One idempotent
 * producer (`acks: -1`, every in-sync replica) per cluster connection: the endpoints whose brokers, TLS
 * and SASL are the same share it, as a Kafka client shares one producer across topics, so one request
 * carries the records of all of them. It is made at the first attempt and closed when no endpoint's
 * newest configuration names it any more (a newer version with another connection, `release`), on
 * `close`, and after `idleMs` unused. An attempt succeeds only when the produce resolved; its receipt is
 * the record's partition and offset.
 *
 * Bounded: every attempt races `timeoutMs`, and kafkajs's own retries are capped (2: an idempotent
 * producer refuses fewer than 1), so Herald's backoff, not the client's, decides the next try. A producer
 * whose send timed out is discarded: what it was doing is unknown. A producer whose send failed otherwise
 * is kept (kafkajs reconnects it and keeps its idempotent sequence); one that never connected is dropped.
 */
export function createKafkaSender(options: KafkaSenderOptions): BrokerSender {
  const clock = options.clock ?? systemClock;
  const idleMs = options.idleMs ?? IDLE_MS;
  const deadlines = new DeadlineQueue(options.timeoutMs);
  const isBlocked = options.allowPrivateNetworks ? () => false : (options.isBlocked ?? isBlockedAddress);
  const socketFactory = guardedSocketFactory({ resolve: options.resolve ?? systemResolve, isBlocked });
  // Keyed by the connection's configuration, credentials included: kept in memory only, never logged.
  const pool = new Map<string, Pooled>();
  const bindings = new Map<string, Binding>();
  const inFlight = new Set<Promise<SendOutcome>>();
  let sweeper: ReturnType<typeof setInterval> | null = null;
  let closed = false;

  function disconnect(entry: Pooled): Promise<void> {
    // disconnect() waits for requests in flight; a broker that is gone must not hold a release up.
    const done = entry.producer.disconnect().catch(() => {});
    return raceTimeout(done, options.timeoutMs);
  }

  /** Takes the connection out of the pool (when it is still `entry`, if given) and closes it. */
  function retire(key: string, entry?: Pooled): Promise<void> {
    const current = pool.get(key);
    if (!current || (entry && current !== entry)) return entry ? disconnect(entry) : Promise.resolve();
    pool.delete(key);
    return disconnect(current);
  }

  /** The endpoints whose newest configuration names the connection `key`. */
  function namedBy(key: string): string[] {
    const named: string[] = [];
    for (const [endpointId, bound] of bindings) if (bound.key === key) named.push(endpointId);
    return named;
  }

  /** The endpoint no longer names its connection: closed once no other endpoint does. */
  function unbind(endpointId: string): Promise<void> {
    const bound = bindings.get(endpointId);
    if (!bound) return Promise.resolve();
    bindings.delete(endpointId);
    const entry = pool.get(bound.key);
    return entry && namedBy(bound.key).length === 0 ? retire(bound.key, entry) : Promise.resolve();
  }

  function sweep(): void {
    const now = clock.now().getTime();
    for (const [key, entry] of pool) {
      if (entry.sending === 0 && now - entry.lastUsed >= idleMs) void retire(key, entry);
    }
  }

  /** The pooled connection this request's configuration names, or (for a request read before its endpoint changed) a one-off. */
  function producerFor(req: BrokerDeliveryRequest, destination: KafkaDestination<string>): Pooled {
    const key = connectionKey(destination);
    const bound = bindings.get(req.endpointId);
    const stale = bound !== undefined && bound.version > req.version;
    if (!stale) {
      if (bound && bound.key !== key) void unbind(req.endpointId);
      bindings.set(req.endpointId, { version: req.version, key });
    }
    const current = pool.get(key);
    if (current) return current;
    const entry = newProducer(key, req, destination);
    // A request read before its endpoint changed to another connection: a producer of its own, closed after it.
    if (stale) return entry;
    pool.set(key, entry);
    entry.ready.catch(() => void retire(key, entry));
    if (sweeper === null) {
      // An idle producer is closed between idleMs and idleMs + 1/4 of it (at most 5 s) after its last use.
      sweeper = setInterval(sweep, Math.max(50, Math.min(idleMs / 4, 5_000)));
      (sweeper as { unref?: () => void }).unref?.();
    }
    return entry;
  }

  function newProducer(
    key: string,
    req: BrokerDeliveryRequest,
    destination: KafkaDestination<string>,
  ): Pooled {
    const opened = openProducer(destination, {
      socketFactory,
      timeoutMs: options.timeoutMs,
      logger: options.logger,
      endpointIds: () => {
        const named = namedBy(key);
        return named.length > 0 ? named : [req.endpointId];
      },
    });
    return { key, ...opened, lastUsed: clock.now().getTime(), sending: 0 };
  }

  async function attempt(req: BrokerDeliveryRequest): Promise<SendOutcome> {
    const start = performance.now();
    const destination = req.destination;
    if (closed || destination.kind !== "kafka") return failureOutcome("connection_error", elapsed(start));
    let entry: Pooled;
    try {
      entry = producerFor(req, destination);
    } catch (err) {
      // kafkajs refuses a configuration it cannot use (a broker without a port) when the client is made.
      return failureOutcome(classifyKafkaFailure(err), elapsed(start));
    }
    const pooled = pool.get(entry.key) === entry;
    entry.sending += 1;
    entry.lastUsed = clock.now().getTime();
    const work = produce(entry, req, destination.topic, options);
    // Heard even when the deadline wins: a late rejection is not an unhandled one.
    work.catch(() => {});
    let timedOut = false;
    let expire = () => {};
    const expired = new Promise<null>((resolve) => {
      expire = () => resolve(null);
    });
    const deadline = deadlines.watch(() => {
      timedOut = true;
      expire();
    });
    try {
      const receipt = await Promise.race([work, expired]);
      if (receipt === null) return failureOutcome("timeout", elapsed(start));
      return {
        ok: true,
        responseStatus: null,
        responseBody: null,
        error: null,
        durationMs: elapsed(start),
        retryAfterMs: null,
        receipt,
      };
    } catch (err) {
      const error = timedOut ? "timeout" : classifyKafkaFailure(err);
      const secrets = destination.sasl ? [destination.sasl.password] : [];
      options.logger?.debug("kafka send failed", {
        endpoint_id: req.endpointId,
        error,
        reason: withoutSecrets(err instanceof Error ? err.message : String(err), secrets),
      });
      return failureOutcome(error, elapsed(start));
    } finally {
      deadline.settle();
      entry.sending -= 1;
      entry.lastUsed = clock.now().getTime();
      // A timed-out producer is in an unknown state; an unpooled one (an older version's) was for this send.
      if (timedOut) void retire(entry.key, entry);
      else if (!pooled) void disconnect(entry);
    }
  }

  return {
    send(req) {
      const p = attempt(req);
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      return p;
    },
    release: (endpointId) => unbind(endpointId),
    /** Refuses new work, waits for attempts in flight (each bounded by timeoutMs), closes every producer. */
    async close() {
      closed = true;
      if (sweeper !== null) clearInterval(sweeper);
      await Promise.allSettled([...inFlight]);
      bindings.clear();
      await Promise.allSettled([...pool.keys()].map((key) => retire(key)));
    },
  };
}

async function produce(
  entry: Pooled,
  req: BrokerDeliveryRequest,
  topic: string,
  sign: Pick<KafkaSenderOptions, "hmac" | "ed25519">,
): Promise<Record<string, string | number>> {
  await entry.ready;
  const headers: Record<string, Buffer> = {};
  let bytes = 0;
  for (const [name, value] of await brokerMessageHeaders(req, sign.hmac, sign.ed25519)) {
    headers[name] = Buffer.from(value, "utf8");
    bytes += name.length + (headers[name] as Buffer).length;
  }
  const key = Buffer.from(req.messageKey, "utf8");
  const value = Buffer.from(req.body, "utf8");
  return entry.batcher.add(topic, { key, value, headers }, bytes + key.length + value.length);
}

function raceTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}
