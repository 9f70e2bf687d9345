// Traces of publishes and attempts (ADR 24). The use cases and the engine hold `Tracing | null`: null
// when tracing is off, so the hot path pays one null check and nothing else.
import type { AttemptResult } from "./deliveries.ts";

/** What an attempt's span is about, known before the send. Never a URL or a header value. */
export interface AttemptStart {
  eventId: string;
  eventType: string;
  endpointId: string;
  deliveryId: string;
  /** 1 for the first attempt of an (event, endpoint) pair. */
  attempt: number;
  trigger: "automatic" | "manual";
  /** The endpoint's host name (no scheme, credentials, path or query). */
  host: string;
  /** The W3C traceparent of the fan-out that stored the event, if it was traced; the attempt's parent. */
  parent: string | null | undefined;
}

/** An attempt's span, started before the send; `traceparent` is sent to the receiver. */
export interface AttemptSpan {
  /** The W3C traceparent naming this span, for the receiver (`traceparent` header). */
  readonly traceparent: string;
  end(
    result: Pick<AttemptResult, "status" | "responseStatus" | "error" | "durationMs" | "nextAttemptAt">,
  ): void;
}

/** The fan-out of one publish: storing the event and its first deliveries, and handing them to the engine. */
export interface FanOutSpan {
  /** Stored with the event: its attempts' spans are this span's children, whenever and wherever they run. */
  readonly traceparent: string;
  end(outcome: { endpoints: number; stored: boolean } | { error: unknown }): void;
}

/** One publish: the event's checks, its idempotency key, the choice of endpoints, and its fan-out. */
export interface PublishSpan {
  fanOut(eventId: string): FanOutSpan;
  end(outcome: { eventId: string; endpoints: number; replayed: boolean } | { error: unknown }): void;
}

export interface Tracing {
  /** Starts a publish's span: a child of the publisher's `traceparent` when it is a valid one, else a root. */
  publish(eventType: string, traceparent: string | undefined): PublishSpan;
  /** Starts an attempt's span, a child of the fan-out the event stored (ADR 24). */
  attempt(start: AttemptStart): AttemptSpan;
}
