import type { StoredClientCertificate } from "./client-certificate.ts";
import type { BrokerDestination, DestinationKind } from "./destination.ts";
import type { EventType } from "./event-catalog.ts";
import type { EventFilter } from "./event-filter.ts";
import type { RateLimit } from "./rate-limit.ts";
import { DISABLED_REASONS, type DisabledReason } from "./reason-codes.ts";
import type { SignatureScheme } from "./signature-scheme.ts";

export { DISABLED_REASONS, type DisabledReason };

/** A secret as stored: sealed (encrypted) text, and when an old one stops being used. */
export interface StoredSecret {
  sealed: string;
  /** null for the current secret; the end of the grace period for a previous one. */
  expiresAt: Date | null;
}

/** A custom header as stored: the name as given, the value sealed (encrypted) like a secret. */
export interface StoredHeader {
  name: string;
  sealed: string;
}

/** A registered endpoint as the service keeps it. */
export interface Endpoint {
  id: string;
  tenantId: string;
  projectId: string;
  url: string;
  events: EventType[];
  description: string | null;
  enabled: boolean;
  disabledReason: DisabledReason | null;
  /** Newest first: the current secret, then previous ones still inside a grace period. */
  secrets: StoredSecret[];
  createdAt: Date;
  updatedAt: Date;
  /** Start of the current run of failures without a success; null after a success. */
  failingSince: Date | null;
  /**
   * The `failingSince` of the streak an `endpoint.failing` event was published for (ADR 20); null while
   * the current streak (if any) has not been reported. A new streak starts unreported.
   */
  failingNotice: Date | null;
  /** When it was last disabled; null while enabled, and on one disabled before Herald kept this. */
  disabledAt: Date | null;
  /** The `disabledAt` an `endpoint.disabled` event was published for (ADR 20); null until then. */
  disabledNotice: Date | null;
  /** Sent with every delivery to this endpoint, in this order. */
  headers: StoredHeader[];
  /** How its deliveries are signed. */
  signatureScheme: SignatureScheme;
  /** Only events matching this filter are delivered (docs/adr/0014-payload-filters.md); null: all. */
  filter: EventFilter | null;
  /** Deliveries to it never start faster than this, across every process (ADR 16); null for none. */
  rateLimit: RateLimit | null;
  /** "fifo": its events arrive in the order Herald accepted them, one at a time (ADR 16). */
  ordering: Ordering;
  /** Presented when the receiver asks for a client certificate (mutual TLS, ADR 22); null for none. */
  clientCertificate: StoredClientCertificate | null;
  /**
   * A Kafka topic, RabbitMQ exchange or SQS queue to deliver to instead of `url` (ADR 27), its
   * credentials sealed like secrets; `url` then holds its address without credentials. null: HTTPS.
   */
  destination: BrokerDestination<string> | null;
}

/** Where an endpoint's deliveries go: "https", or its destination's kind. */
export function endpointKind(e: Pick<Endpoint, "destination">): DestinationKind {
  return e.destination?.kind ?? "https";
}

export const ORDERINGS = ["none", "fifo"] as const;
export type Ordering = (typeof ORDERINGS)[number];

/**
 * Deliveries held back by ordering: for a FIFO endpoint, every pending delivery but its head (the one
 * sent, or waiting for its retry); none for an endpoint without ordering.
 */
export function heldCount(ordering: Ordering, pending: number): number {
  return ordering === "fifo" ? Math.max(0, pending - 1) : 0;
}

/** The endpoint after being switched on: enabled, reason and failure streak cleared. */
export function enableEndpoint(e: Endpoint, now: Date): Endpoint {
  return {
    ...e,
    enabled: true,
    disabledReason: null,
    failingSince: null,
    disabledAt: null,
    disabledNotice: null,
    updatedAt: now,
  };
}

/** The endpoint after being switched off for a reason. */
export function disableEndpoint(e: Endpoint, reason: DisabledReason, now: Date): Endpoint {
  return {
    ...e,
    enabled: false,
    disabledReason: reason,
    disabledAt: now,
    disabledNotice: null,
    updatedAt: now,
  };
}

/** Secrets still valid at a moment: the current one and any previous one whose grace period has not ended. */
export function activeSecrets(secrets: readonly StoredSecret[], now: Date): StoredSecret[] {
  return secrets.filter((s) => s.expiresAt === null || s.expiresAt.getTime() > now.getTime());
}

/**
 * The secrets after a rotation: the new one first; the old current one kept until the grace period ends
 * (dropped at once when the grace period is zero); expired ones removed.
 */
export function rotateSecrets(
  secrets: readonly StoredSecret[],
  newSealed: string,
  gracePeriodMs: number,
  now: Date,
): StoredSecret[] {
  const kept = activeSecrets(secrets, now);
  const previous: StoredSecret[] =
    gracePeriodMs > 0
      ? kept.map((s) => ({
          sealed: s.sealed,
          expiresAt: s.expiresAt ?? new Date(now.getTime() + gracePeriodMs),
        }))
      : [];
  return [{ sealed: newSealed, expiresAt: null }, ...previous];
}
