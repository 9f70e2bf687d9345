import type { DeliveryError, DeliveryStatus, DeliveryTrigger } from "../../domain/delivery.ts";
import type { DisabledReason, Ordering } from "../../domain/endpoint.ts";
import type { EventType } from "../../domain/event-catalog.ts";
import type { SignatureScheme } from "../../domain/signature-scheme.ts";
import type { ClientCertificateRecord } from "../client-certificate-record.ts";

// Stored shapes: snake_case fields, `_id` is the domain id, times are BSON dates.

export interface SecretDoc {
  sealed: string;
  expires_at: Date | null;
}

export interface HeaderDoc {
  name: string;
  sealed: string;
}

export interface EndpointDoc {
  _id: string;
  tenant_id: string;
  project_id: string;
  url: string;
  events: EventType[];
  description: string | null;
  enabled: boolean;
  disabled_reason: DisabledReason | null;
  secrets: SecretDoc[];
  created_at: Date;
  updated_at: Date;
  failing_since: Date | null;
  // Absent on endpoints written before custom headers and signature schemes: none, herald-v1.
  headers?: HeaderDoc[];
  signature_scheme?: SignatureScheme;
  /** The payload filter as JSON text (its keys hold $ and dots); absent or null: none. */
  filter?: string | null;
  /** Exactly one of the two; absent on endpoints stored before rate limits existed (ADR 16). */
  rate_limit?: RateLimitDoc | null;
  /** Absent on endpoints stored before ordering existed: "none". */
  ordering?: Ordering;
  // Operational events (ADR 20); absent on endpoints stored before them: null.
  failing_notice?: Date | null;
  disabled_at?: Date | null;
  disabled_notice?: Date | null;
  /** Mutual TLS (ADR 22); absent on endpoints stored before it existed: none. */
  client_certificate?: ClientCertificateDoc | null;
}

/** A client certificate: the PEM chain and its facts in clear, the private key sealed; its times BSON dates. */
export type ClientCertificateDoc = ClientCertificateRecord<Date>;

export type RateLimitDoc = { per_second: number } | { per_minute: number };

export interface EventDoc {
  _id: string;
  tenant_id: string;
  project_id: string;
  type: EventType;
  body: string;
  occurred_at: Date;
  created_at: Date;
  targets: string[];
  fanout_pending: boolean;
  // What erasure finds an event by (ADR 15). Absent on events stored before Herald kept them, until
  // the subject backfill fills them in; recipient_key is absent on events without a recipient.
  resource_id?: string | null;
  recipient_key?: string | null;
  /** Acceptance order (ADR 16); absent on events stored before it existed (then created_at in µs). */
  sequence?: number;
  /** The W3C traceparent of the publish's fan-out span (ADR 24); absent when the publish was not traced. */
  traceparent?: string;
}

export interface DeliveryDoc {
  _id: string;
  tenant_id: string;
  project_id: string;
  webhook_id: string;
  event_id: string;
  event_type: EventType;
  attempt: number;
  trigger: DeliveryTrigger;
  status: DeliveryStatus;
  url: string;
  // The attempt's outcome: absent (or null) until the attempt is made. A pending record is written
  // without them, so the due read (which FerretDB v1 decodes record by record) has less to decode.
  response_status?: number | null;
  response_body?: string | null;
  error?: DeliveryError | null;
  duration_ms?: number | null;
  scheduled_at: Date;
  attempted_at?: Date | null;
  next_attempt_at?: Date | null;
  created_at: Date;
  /** The endpoint's shard (ADR 9): the owner of a shard reads due work by it. */
  shard: number;
  /** Set by an erasure (ADR 15); absent on a record no erasure touched. */
  erased_at?: Date | null;
  /** The event's acceptance order (ADR 16); absent on records from before it existed. */
  sequence?: number;
  /** The scheme the attempt was signed with; absent before its send and on records from before it was kept. */
  signature_scheme?: SignatureScheme | null;
  /** The custom header names the attempt sent (never values); absent as `signature_scheme`. */
  header_names?: string[] | null;
}

/**
 * One generation of one shard's lease. Created by an insert and never by an update: the unique _id
 * makes "who holds generation n" atomic even on FerretDB v1. Only its owner updates it (renew, give back).
 */
export interface ShardLeaseDoc {
  /** `<shard>:<generation>` */
  _id: string;
  shard: number;
  generation: number;
  owner: string;
  /** The epoch once given back. */
  expires_at: Date;
}

/** A live Herald process, for rebalancing: each one renews its own. */
export interface ProcessDoc {
  _id: string;
  expires_at: Date;
}

export interface TokenDoc {
  _id: string;
  hash: string;
  prefix: string;
  tenant_id: string;
  project_id: string;
  name: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

export interface IdempotencyDoc {
  /** The scope key: one record per key. */
  _id: string;
  event_id: string;
  fingerprint: string;
  created_at: Date;
}

/** One erasure (ADR 15): what it was about and how much it removed. */
export interface ErasureDoc {
  _id: string;
  tenant_id: string;
  project_id: string;
  subject: "resource_id" | "recipient";
  resource_id: string | null;
  events_erased: number;
  deliveries_erased: number;
  deliveries_cancelled: number;
  created_at: Date;
}

/** A project's own settings; `_id` is `<tenant_id>/<project_id>`. */
export interface ProjectSettingsDoc {
  _id: string;
  tenant_id: string;
  project_id: string;
  retention_ms: number | null;
  updated_at: Date;
}
