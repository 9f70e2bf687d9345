import { unixSeconds } from "../../domain/time.ts";
import { type BrokerSenders, brokerSenders } from "../destinations.ts";
import type { Logger } from "../logger.ts";
import type { BrokerDeliveryRequest, Sender } from "../ports/sending.ts";
import type { Clock } from "../ports/system.ts";
import type { Prepared, Sent } from "./work.ts";

/**
 * Stage 4, send: one signed POST, its attempt starting at `attemptedAt` (the pace stage's moment), with
 * the attempt's `traceparent` when it is traced; a sender that throws counts as a connection error.
 * A broker endpoint's message goes through the broker sender of its kind instead (ADR 27). Never throws.
 */
export async function sendPrepared(
  p: Prepared,
  deps: { sender: Sender; brokers?: BrokerSenders | undefined; clock: Clock; logger: Logger },
  attemptedAt: Date = deps.clock.now(),
  traceparent?: string,
): Promise<Sent> {
  try {
    const timestamp = unixSeconds(attemptedAt);
    const outcome = p.destination
      ? await (deps.brokers ?? brokerSenders({}, deps)).send(brokerRequest(p, timestamp, traceparent))
      : await deps.sender.send({
          url: p.endpoint.url,
          body: p.event.body,
          eventId: p.event.id,
          secrets: p.secrets,
          timestamp,
          scheme: p.endpoint.signatureScheme,
          headers: p.headers,
          traceparent,
          clientCertificate: p.clientCertificate,
        });
    // Built field by field: one fixed shape on the hot path.
    return {
      delivery: p.delivery,
      event: p.event,
      endpoint: p.endpoint,
      secrets: p.secrets,
      headers: p.headers,
      clientCertificate: p.clientCertificate,
      destination: p.destination,
      attemptedAt,
      outcome,
    };
  } catch (e) {
    deps.logger.error("sender failed unexpectedly", { error: e as Error, delivery_id: p.delivery.id });
    return {
      ...p,
      attemptedAt,
      outcome: {
        ok: false,
        responseStatus: null,
        responseBody: null,
        error: "connection_error",
        durationMs: deps.clock.now().getTime() - attemptedAt.getTime(),
        retryAfterMs: null,
      },
    };
  }
}

/**
 * A broker delivery (ADR 27): the HTTPS request's body and signature inputs, plus the destination, the
 * key (the event's resource id, or the endpoint id) and the deduplication id (the event id, so SQS drops
 * an automatic resend; `<event id>:<delivery id>` for a manual retry, a deliberate resend that must arrive).
 */
export function brokerRequest(p: Prepared, timestamp: number, traceparent?: string): BrokerDeliveryRequest {
  const destination = p.destination!;
  const { event, delivery, endpoint } = p;
  const byEndpoint = destination.kind === "rabbitmq" || destination.key === "endpoint";
  return {
    body: event.body,
    eventId: event.id,
    secrets: p.secrets,
    timestamp,
    scheme: endpoint.signatureScheme,
    headers: p.headers,
    traceparent,
    endpointId: endpoint.id,
    version: endpoint.updatedAt.getTime(),
    destination,
    messageKey: byEndpoint ? endpoint.id : (event.resourceId ?? resourceIdOf(event.body) ?? endpoint.id),
    deduplicationId: delivery.trigger === "manual" ? `${event.id}:${delivery.id}` : event.id,
  };
}

/** The envelope's resource_id, for an event stored before Herald kept it beside the body. */
function resourceIdOf(body: string): string | null {
  try {
    const id = (JSON.parse(body) as { resource_id?: unknown }).resource_id;
    return typeof id === "string" ? id : null;
  } catch {
    return null;
  }
}
