import type { SendOutcome } from "../../domain/delivery.ts";

/** One attempt to POST an event's bytes to an endpoint. */
export interface DeliveryRequest {
  url: string;
  /** The envelope exactly as serialised when the event was accepted; every attempt sends these bytes. */
  body: string;
  /** The event id, sent as X-Webhook-Id. */
  eventId: string;
  /** Plain endpoint secrets, newest first; two during a rotation grace period. */
  secrets: string[];
  /** Unix seconds, sent as X-Webhook-Timestamp and signed. */
  timestamp: number;
}

/** Sends deliveries; never throws for a failed attempt, it reports the failure in the outcome. */
export interface Sender {
  send(req: DeliveryRequest): Promise<SendOutcome>;
  /** Stops accepting work and releases pooled connections. */
  close(): Promise<void>;
}
