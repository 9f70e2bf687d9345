import type { AttemptSpan, Tracing } from "../ports/tracing.ts";
import type { Prepared } from "./work.ts";

/**
 * Starts the span of one attempt (tracing on only): a child of the fan-out whose traceparent the event
 * stored, so a retry hours later, in another process, is still in the publish's trace (ADR 24). It names
 * the endpoint by id and host only: a URL may hold credentials.
 */
export function traceAttempt(tracing: Tracing, p: Prepared): AttemptSpan {
  return tracing.attempt({
    eventId: p.event.id,
    eventType: p.event.type,
    endpointId: p.endpoint.id,
    deliveryId: p.delivery.id,
    attempt: p.delivery.attempt,
    trigger: p.delivery.trigger,
    host: hostOf(p.endpoint.url),
    parent: p.event.traceparent,
  });
}

/** Host names by URL, parsed once per URL (parsing a URL costs more than the span). */
const hosts = new Map<string, string>();

function hostOf(url: string): string {
  let host = hosts.get(url);
  if (host === undefined) {
    try {
      host = new URL(url).hostname;
    } catch {
      host = "";
    }
    if (hosts.size >= 10_000) hosts.clear();
    hosts.set(url, host);
  }
  return host;
}
