// The boxes of a broker destination (ADR 27), shared by the new endpoint form and an endpoint's
// destination form. Each field is named after its API path, shows its issues beside it, and a credential
// box is always empty: a password input that says whether one is stored, never what it is.
import { html } from "hono/html";
import {
  type BrokerDestination,
  type DestinationKind,
  MESSAGE_KEYS,
  SASL_MECHANISMS,
} from "../../../../domain/destination.ts";
import { MAX_CA_PEM_LENGTH, MAX_CREDENTIAL_LENGTH } from "../../../../domain/destination-rules.ts";
import { CREDENTIAL_MASK } from "../../../../domain/destination-values.ts";
import type { Html } from "../view.ts";
import type { Draft } from "./destination-form.ts";

/** The issues of a form by field name (see fieldIssues). */
export type FieldErrors = ReadonlyMap<string, readonly string[]>;

/** What is stored of an endpoint's credentials (edit only): a box then says blank keeps it. */
export interface Stored {
  kafka_sasl_password?: boolean;
  rabbitmq_password?: boolean;
  sqs_secret_access_key?: boolean;
  sqs_session_token?: boolean;
}

export interface FieldsView {
  values: Draft;
  errors: FieldErrors;
  /** Absent on the new endpoint form; an endpoint's stored credentials on its destination form. */
  stored?: Stored;
}

/** A field's issues, beside it; the box points at them with aria-describedby. */
export function fieldError(errors: FieldErrors, name: string): Html | "" {
  const list = errors.get(name);
  if (!list?.length) return "";
  return html`<p class="field-error" id="${name}-error"><span class="sr">Error: </span>${list.join("; ")}</p>`;
}

const invalidAttrs = (errors: FieldErrors, name: string) =>
  errors.get(name)?.length ? html` aria-invalid="true" aria-describedby="${name}-error"` : "";

const hint = (text: string) => (text ? html` <span class="muted small">(${text})</span>` : "");

/** A labelled text box with its issues. */
export function textBox(v: FieldsView, name: string, label: string, help = "", placeholder = ""): Html {
  return html`<label for="${name}">${label}${hint(help)}</label>
<input id="${name}" name="${name}" type="text" maxlength="2048" autocomplete="off" spellcheck="false" value="${v.values[name] ?? ""}" placeholder="${placeholder}"${invalidAttrs(v.errors, name)} />
${fieldError(v.errors, name)}`;
}

/** A credential's password box: empty always; on an endpoint, blank keeps the stored one. */
function secretBox(v: FieldsView, name: keyof Stored, label: string, help: string): Html {
  const kept = v.stored?.[name];
  const placeholder = kept ? `${CREDENTIAL_MASK} (blank keeps it)` : v.stored ? "none stored" : "";
  return html`<label for="${name}">${label}${hint(help)}</label>
<input id="${name}" name="${name}" type="password" maxlength="${MAX_CREDENTIAL_LENGTH}" autocomplete="new-password" spellcheck="false" placeholder="${placeholder}"${invalidAttrs(v.errors, name)} />
${fieldError(v.errors, name)}`;
}

function select(v: FieldsView, name: string, label: string, options: [string, string][], help = ""): Html {
  const current = v.values[name] ?? options[0]![0];
  return html`<label for="${name}">${label}${hint(help)}</label>
<select id="${name}" name="${name}"${invalidAttrs(v.errors, name)}>${options.map(
    ([value, text]) =>
      html`<option value="${value}"${value === current ? html` selected` : ""}>${text}</option>`,
  )}</select>
${fieldError(v.errors, name)}`;
}

const removeBox = (name: string, label: string) =>
  html`<label class="check"><input type="checkbox" name="${name}" value="yes" /> ${label}</label>`;

const KEY_OPTIONS: [string, string][] = MESSAGE_KEYS.map((k) => [
  k,
  k === "resource"
    ? "the event's resource_id (a resource's events stay in order)"
    : "the endpoint id (one order for all)",
]);

function kafkaFields(v: FieldsView): Html {
  const saslOn = v.stored?.kafka_sasl_password === true;
  const mechanisms: [string, string][] = SASL_MECHANISMS.map((m) => [m, m]);
  return html`<label for="kafka_brokers">Brokers${hint("host:port, one per line or separated by commas; 1 to 10")}</label>
<textarea id="kafka_brokers" name="kafka_brokers" rows="3" maxlength="3100" spellcheck="false" placeholder="b1.example.com:9092"${invalidAttrs(v.errors, "kafka_brokers")}>${v.values.kafka_brokers ?? ""}</textarea>
${fieldError(v.errors, "kafka_brokers")}
${textBox(v, "kafka_topic", "Topic", "letters, digits, '.', '_', '-'", "orders")}
${select(v, "kafka_key", "Record key", KEY_OPTIONS)}
${select(v, "kafka_tls", "TLS", [
  ["on", "on (the system's CA roots)"],
  ["ca", "on, trusting this CA"],
  ["off", "off (plaintext)"],
])}
<label for="kafka_tls_ca">CA certificates${hint('PEM, only with "on, trusting this CA"')}</label>
<textarea id="kafka_tls_ca" name="kafka_tls_ca" rows="3" maxlength="${MAX_CA_PEM_LENGTH}" spellcheck="false" placeholder="-----BEGIN CERTIFICATE-----"${invalidAttrs(v.errors, "kafka_tls_ca")}>${v.values.kafka_tls_ca ?? ""}</textarea>
${fieldError(v.errors, "kafka_tls_ca")}
${select(v, "kafka_sasl_mechanism", "SASL mechanism", saslOn ? mechanisms : [["none", "none"], ...mechanisms])}
${textBox(v, "kafka_sasl_username", "SASL username")}
${secretBox(v, "kafka_sasl_password", "SASL password", "encrypted at rest, never shown")}
${saslOn ? removeBox("kafka_sasl_remove", "Remove SASL (connect without authenticating)") : ""}`;
}

function rabbitmqFields(v: FieldsView): Html {
  return html`${textBox(v, "rabbitmq_url", "Server URL", "amqps:// or amqp://, user, host, port, vhost; a password in it is taken out and kept as the password", "amqps://herald@mq.example.com/prod")}
${secretBox(v, "rabbitmq_password", "Password", "encrypted at rest, never shown")}
${v.stored?.rabbitmq_password ? removeBox("rabbitmq_password_remove", "Remove the password") : ""}
${textBox(v, "rabbitmq_exchange", "Exchange", "empty: the default exchange")}
${textBox(v, "rabbitmq_routing_key", "Routing key", "at most 255 bytes")}`;
}

function sqsFields(v: FieldsView): Html {
  return html`${textBox(v, "sqs_queue_url", "Queue URL", "a name ending in .fifo is a FIFO queue", "https://sqs.eu-west-1.amazonaws.com/123456789012/orders")}
${textBox(v, "sqs_region", "Region", "", "eu-west-1")}
${textBox(v, "sqs_access_key_id", "Access key id")}
${secretBox(v, "sqs_secret_access_key", "Secret access key", "encrypted at rest, never shown")}
${secretBox(v, "sqs_session_token", "Session token", "optional: temporary credentials")}
${v.stored?.sqs_session_token ? removeBox("sqs_session_token_remove", "Clear the session token") : ""}
${textBox(v, "sqs_endpoint_url", "Endpoint URL", "optional: an SQS-compatible server instead of AWS's")}
${select(v, "sqs_key", "Group id (FIFO queues)", KEY_OPTIONS)}`;
}

const KIND_FIELDS = { kafka: kafkaFields, rabbitmq: rabbitmqFields, sqs: sqsFields } as const;

/** The boxes of one broker kind. */
export function destinationFields(kind: Exclude<DestinationKind, "https">, v: FieldsView): Html {
  return KIND_FIELDS[kind](v);
}

/** What an endpoint's destination form shows at first: its settings, never a credential. */
export function draftOfDestination(d: BrokerDestination<unknown>): Draft {
  if (d.kind === "kafka")
    return {
      kafka_brokers: d.brokers.join("\n"),
      kafka_topic: d.topic,
      kafka_key: d.key,
      kafka_tls: typeof d.tls === "object" ? "ca" : d.tls ? "on" : "off",
      kafka_tls_ca: typeof d.tls === "object" ? d.tls.ca : "",
      kafka_sasl_mechanism: d.sasl?.mechanism ?? "none",
      kafka_sasl_username: d.sasl?.username ?? "",
    };
  if (d.kind === "rabbitmq")
    return { rabbitmq_url: d.url, rabbitmq_exchange: d.exchange, rabbitmq_routing_key: d.routingKey };
  return {
    sqs_queue_url: d.queueUrl,
    sqs_region: d.region,
    sqs_access_key_id: d.accessKeyId,
    sqs_endpoint_url: d.endpointUrl ?? "",
    sqs_key: d.key,
  };
}

/** Which credentials an endpoint has stored. */
export function storedOf(d: BrokerDestination<unknown>): Stored {
  if (d.kind === "kafka") return { kafka_sasl_password: d.sasl !== null };
  if (d.kind === "rabbitmq") return { rabbitmq_password: d.password !== null };
  return { sqs_secret_access_key: true, sqs_session_token: d.sessionToken !== null };
}
