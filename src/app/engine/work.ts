// The hand-offs between the engine's stages: own shards → claim → prepare → send → decide → record.
import type { Delivery, SendOutcome } from "../../domain/delivery.ts";
import type { BrokerDestination } from "../../domain/destination.ts";
import type { Endpoint } from "../../domain/endpoint.ts";
import type { OperationalNotice } from "../../domain/operational.ts";
import type { AttemptResult } from "../ports/deliveries.ts";
import type { StoredEvent } from "../ports/events.ts";
import type { ClientIdentity } from "../ports/sending.ts";

/** A due delivery this process now holds (claim → prepare). */
export interface Claimed {
  delivery: Delivery;
  /** Claimed as the head of an endpoint with ordering "fifo" (the only way such a delivery is sent). */
  head?: boolean;
  /**
   * Its endpoint as the publish that stored it read it, at most HANDOVER_FRESH_MS ago (ADR 9, "The
   * publish hand-over"): prepare need not read it again. Absent otherwise.
   */
  endpoint?: Endpoint;
}

/** A delivery ready to go: its event's bytes, its endpoint, its open secrets and headers (prepare → send). */
export interface Prepared {
  delivery: Delivery;
  event: StoredEvent;
  endpoint: Endpoint;
  /** Plain secrets, newest first. */
  secrets: string[];
  /** The endpoint's custom headers with their plain values. */
  headers: [string, string][];
  /** The endpoint's client certificate with its plain key (mutual TLS), or null. */
  clientCertificate: ClientIdentity | null;
  /** A broker endpoint's destination with its credentials opened (ADR 27); null for HTTPS. */
  destination: BrokerDestination<string> | null;
}

/** A delivery that was sent, with what came back (send → decide). */
export interface Sent extends Prepared {
  attemptedAt: Date;
  outcome: SendOutcome;
}

/** What is written for an attempt, and what it does to its endpoint (decide → record). */
export interface Decided {
  result: AttemptResult;
  endpointId: string;
  /** The endpoint's failure streak: ended by a success, started by a failure, untouched otherwise. */
  streak: "end" | "start" | null;
  /** Disable the endpoint (410 Gone). */
  disable: "gone" | null;
  /** delivery.exhausted, when this was the event's last automatic attempt to the endpoint and it failed (ADR 20). */
  exhausted: OperationalNotice | null;
}
