// What the delivery engine needs from the outside: a sender, a wake-up signal, metrics.

import type { Delivery, SendOutcome } from "../../domain/delivery.ts";
import type { Endpoint } from "../../domain/endpoint.ts";
import type { SignatureScheme } from "../../domain/signature-scheme.ts";
import type { StoredEvent } from "./events.ts";

/**
 * What a publish just stored, handed to this process's engine so its first attempts need no read
 * (ADR 9, "The publish hand-over"): the event, its first deliveries as written, and their endpoints as
 * the publish read them moments before.
 */
export interface AcceptedWork {
  event: StoredEvent;
  deliveries: readonly Delivery[];
  /** Complete records (secrets, headers, ordering), read by this publish; used for its first attempts only. */
  endpoints: readonly Endpoint[];
}

/**
 * Work stored for these endpoints outside a publish (a manual retry, a replay, a finished fan-out): the
 * processes that own them are told, wherever they run, as they are of a publish's work (ADR 30).
 */
export interface StoredWork {
  endpointIds: readonly string[];
}

/** Wakes the local dispatcher at once (publish, manual retry). */
export interface DispatchSignal {
  /**
   * Due work may be waiting: claim soon. A publish says what it stored: the engine queues the first
   * deliveries of the shards it owns as they are, with their endpoints, and reads the database only
   * for the rest (FIFO endpoints, other owners' shards, a full queue). Other work says its endpoints.
   */
  notify(work?: AcceptedWork | StoredWork): void;
}

/** One signed POST of an event to an endpoint. */
export interface DeliveryRequest {
  url: string;
  /** The envelope exactly as serialised when the event was accepted; every attempt sends these bytes. */
  body: string;
  /** The event id, sent as X-Webhook-Id (webhook-id). */
  eventId: string;
  /** Plain endpoint secrets, newest first; two during a rotation grace period (one signature each). */
  secrets: string[];
  /** Unix seconds, sent as X-Webhook-Timestamp (webhook-timestamp) and signed. */
  timestamp: number;
  /** Which headers carry the id, timestamp and signatures, and how they are signed. */
  scheme: SignatureScheme;
  /** The endpoint's custom headers, names and plain values; never logged. */
  headers: readonly (readonly [string, string])[];
  /** The attempt's W3C traceparent, sent as `traceparent`; absent when tracing is off (ADR 24). */
  traceparent?: string | undefined;
  /** Presented when the receiver asks for a client certificate (mutual TLS, ADR 22); absent or null: none. */
  clientCertificate?: ClientIdentity | null | undefined;
}

/** A client certificate and its plain key, as a sender presents them (ADR 22). */
export interface ClientIdentity {
  /**
   * Names this certificate and key of this endpoint (the endpoint id and the sealed key): senders keep
   * connections per identity, so a connection made with one is never used for another.
   */
  id: string;
  /** PEM certificate chain, leaf first. */
  certificate: string;
  /** PEM private key (PKCS #8, unencrypted); never logged. */
  key: string;
}

/**
 * Sends deliveries over HTTP (undici on Node, fetch on Bun and Deno). Never throws for a failed
 * attempt: it reports the failure in the outcome.
 */
export interface Sender {
  send(request: DeliveryRequest): Promise<SendOutcome>;
  /** Stops accepting work and releases pooled connections. */
  close(): Promise<void>;
}

/** What the delivery engine reports for /metrics. */
export interface DeliveryMetrics {
  attempt(outcome: { status: string; error: string | null; durationMs: number | null }): void;
  /** Shards taken over from a process whose lease expired (it died or stalled): herald_lease_recoveries_total. */
  leaseRecovered(count: number): void;
  /** How many shards this process owns now. */
  shardsOwned(count: number): void;
  endpointDisabled(reason: string): void;
  publishToAttempt(ms: number): void;
}

/**
 * One delivery to a broker destination (ADR 27): the same body and signature headers an HTTPS endpoint
 * gets, carried as record headers (Kafka), message headers (AMQP) or message attributes (SQS).
 */
export interface BrokerDeliveryRequest extends Omit<DeliveryRequest, "url" | "clientCertificate"> {
  /** The endpoint's id; with `version`, names the pooled producer or channel. */
  endpointId: string;
  /** The endpoint's `updatedAt` in ms: a producer made for an older version is closed, not reused. */
  version: number;
  /** The destination with its credentials unsealed; never logged. */
  destination: import("../../domain/destination.ts").BrokerDestination<string>;
  /** Kafka record key / SQS FIFO MessageGroupId: the event's resource id or the endpoint id, per `destination.key`. */
  messageKey: string;
  /** SQS FIFO MessageDeduplicationId: the event id on automatic attempts, `<event id>:<delivery id>` on manual ones. */
  deduplicationId: string;
}

/**
 * Sends deliveries to one kind of broker, pooling a producer or channel per endpoint and version.
 * Never throws for a failed attempt: it reports the failure in the outcome (with `receipt` on success).
 */
export interface BrokerSender {
  send(request: BrokerDeliveryRequest): Promise<SendOutcome>;
  /** Closes what is pooled for this endpoint (disabled, changed or deleted). */
  release(endpointId: string): Promise<void>;
  /** Stops accepting work and closes every producer and channel. */
  close(): Promise<void>;
}
