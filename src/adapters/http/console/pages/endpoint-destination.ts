// A broker endpoint's destination on the console (ADR 27): its kind and settings, never a credential
// (shown as the mask, as custom header values are), and what a broker answered for an attempt.
import { html } from "hono/html";
import type { Receipt } from "../../../../domain/delivery.ts";
import { CREDENTIAL_MASK } from "../../../../domain/destination-values.ts";
import { type Endpoint, endpointKind } from "../../../../domain/endpoint.ts";
import type { Html } from "../view.ts";

const KIND_TEXT = {
  https: "HTTPS: each event is POSTed to the URL",
  kafka: "Apache Kafka: each event is a record on the topic",
  rabbitmq: "RabbitMQ: each event is published to the exchange with the routing key",
  sqs: "Amazon SQS: each event is a message on the queue",
} as const;

/** The kind, with a short line of what it means. */
export function kindFacts(e: Endpoint): Html {
  const kind = endpointKind(e);
  return html`<code>${kind}</code> <span class="muted small">(${KIND_TEXT[kind]})</span>`;
}

/** The destination's settings as a nested list; credentials only as the mask; "" for HTTPS. */
export function destinationFacts(e: Endpoint): Html | "" {
  const d = e.destination;
  if (!d) return "";
  const row = (k: string, v: unknown) => html`<dt>${k}</dt><dd><code>${String(v)}</code></dd>`;
  const rows =
    d.kind === "kafka"
      ? [
          row("Brokers", d.brokers.join(", ")),
          row("Topic", d.topic),
          row("Record key", d.key === "endpoint" ? "the endpoint id" : "the event's resource_id"),
          row("TLS", typeof d.tls === "object" ? "yes, with its own CA" : d.tls ? "yes" : "no (plaintext)"),
          row(
            "SASL",
            d.sasl ? `${d.sasl.mechanism}, user ${d.sasl.username}, password ${CREDENTIAL_MASK}` : "none",
          ),
        ]
      : d.kind === "rabbitmq"
        ? [
            row("Server", d.url),
            row("Password", d.password ? CREDENTIAL_MASK : "none"),
            row("Exchange", d.exchange === "" ? '"" (the default exchange)' : d.exchange),
            row("Routing key", d.routingKey),
          ]
        : [
            row("Queue", d.queueUrl),
            row("Region", d.region),
            row("Access key id", d.accessKeyId),
            row("Secret access key", CREDENTIAL_MASK),
            row("Session token", d.sessionToken ? CREDENTIAL_MASK : "none"),
            row("Endpoint URL", d.endpointUrl ?? "AWS's for the region"),
            row("Group id (FIFO)", d.key === "endpoint" ? "the endpoint id" : "the event's resource_id"),
          ];
  return html`<dt>Destination</dt><dd><dl class="props">${rows}</dl><span class="muted small">Credentials are encrypted at rest and never shown; change the destination below.</span></dd>`;
}

/** A broker's receipt as `key value` pairs: partition and offset, delivery tag, message id. */
export function receiptText(receipt: Receipt | null | undefined): Html | string {
  if (!receipt) return "—";
  return html`${Object.entries(receipt).map(([k, v], i) => html`${i ? " · " : ""}${k} <code>${String(v)}</code>`)}`;
}
